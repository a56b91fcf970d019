"""Text measures that the writer, the referee, the extractive team and the judges share: how a
text splits (`split`), prose or code and markup (`markup`), stems and word families (`terms`),
repetition (`repetition`), absence markers (`absence`) and the similarity bands (`bands`).

Pure functions on text and constants: this package imports nothing of agents_llm outside
itself, so every layer above may import it and none of them needs another for a measure.
"""
