"""The extractive team loads only a tokenizer: no llama.cpp context warning on the console."""

import subprocess
import sys


def test_loading_the_tokenizer_prints_nothing():
    code = "from agents_llm.extractive.tokens import TokenCounter; assert TokenCounter().count('hello world') > 0"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-1500:]
    assert "llama_context" not in done.stderr and "n_ctx" not in done.stderr, done.stderr[-1500:]
