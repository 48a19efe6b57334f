"""`thinking-hats think` on a terminal: the route is shown from the start, refusals come before the spinner."""

from __future__ import annotations

import pytest

from fakes import FakeLLM, Seen
from thinking_hats.cli.main import main

QUESTION = "Should we rewrite the billing service in Rust, given the team's skills, the risk and the cost?"


@pytest.mark.parametrize(
    ("strategy", "shown"),
    [("double", "2 hats + synthesis"), ("full", "5 hats + synthesis"), ("single", "1 hat")],
)
def test_the_strategy_its_hats_and_their_count_show_before_the_first_model_call(
    configured: FakeLLM, capsys: pytest.CaptureFixture[str], strategy: str, shown: str
) -> None:
    before_first_call: list[str] = []

    def answer(seen: Seen) -> str:
        if not before_first_call:
            before_first_call.append(capsys.readouterr().err)
        return f"[{seen.role}] fine"

    configured.answer = answer
    assert main(["think", QUESTION, "--strategy", strategy]) == 0

    [err] = before_first_call
    assert f"{strategy} (score " in err and shown in err
    hats = {seen.role for seen in configured.history} - {"synthesis"}
    assert all(hat in err for hat in hats), (hats, err)


@pytest.mark.parametrize(
    ("argv", "field"),
    [(["think", ""], "thought"), (["think", "Fine.", "--session", "a b"], "session")],
)
def test_a_refused_thought_prints_only_the_error_with_no_spinner(
    capsys: pytest.CaptureFixture[str], argv: list[str], field: str
) -> None:
    code = main(argv)

    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith("thinking-hats: ") and field in err
    assert "thinking…" not in err and len(err.strip().splitlines()) == 1, err
