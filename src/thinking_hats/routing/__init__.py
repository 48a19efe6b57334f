"""The router: how a thought is read (`reading`, `vocabulary`, `terms`), weighed (`weights`, `router`) and how the
router is measured against labelled thoughts (`evaluation`). Local and deterministic: no model call."""
