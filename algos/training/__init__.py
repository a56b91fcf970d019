"""Training infrastructure shared by experiments/train.py and experiments/evaluate.py:
episode rollout, metric loggers (CSV, TensorBoard, W&B), atomic checkpoints."""
