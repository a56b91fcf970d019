"""Speed and cost benchmarks: the env's rounds, the learner's updates, the LLM backends, RAG, the
rollout's episodes per hour, ingest and the trace viewer."""
