"""The thinking hats: routing a thought to hats, running them concurrently against the model providers and synthesising
their answers, with the prompt files they render.
"""
