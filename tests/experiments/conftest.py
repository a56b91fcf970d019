"""The experiments/ entry points' tests: one torch thread (a busy 2-core machine)."""

import torch


torch.set_num_threads(1)
