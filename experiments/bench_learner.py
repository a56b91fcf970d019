#!/usr/bin/env python
"""Learner throughput: our QMIX update vs the same update with torchrl's QMixer + QMixerLoss.

    python experiments/bench_learner.py                       # 32 episodes x 20 rounds x 4 agents
    python experiments/bench_learner.py --updates 100 --threads 2
    python experiments/bench_learner.py --breakdown-only      # only where an update's time goes
    python experiments/bench_learner.py --breakdown-only --products  # and each matrix product's rate

Both sides get identical tensors (observations, actions, rewards, terminals, states)
and do one full update each iteration: forward of the online and target networks over
all rounds, QMIX mixing, one-step TD target, backward, gradient clipping, Adam step,
target-update bookkeeping.

* ours: ``algos.QMIX.train_on_batch`` -- GNN (GraphConv(mean) over a random
  communication graph per round, all episodes x rounds batched) -> GRU (GRUCell
  parameters run over the sequence by ``algos.networks.gru_sequence``, a custom autograd
  function) -> MLP agents, double Q, hypernetwork mixer with V(s); the batch's inputs are
  prepared once for the online and the target network.
* torchrl: the same encoder -> GRU -> MLP agent without the GNN (torchrl has no graph
  agent), ``torchrl.modules.QMixer`` and ``torchrl.objectives.multiagent.QMixerLoss``
  with a TD(0) estimator and ``HardUpdate``. Its agent's GRU is ``nn.GRU`` (torch's own
  sequence GRU, what a torchrl user writes); our side's recurrence is our code, so it is
  part of what is measured.

The sides run in alternating rounds (ours, ..., torchrl, ours, ...) so a machine shared
with other jobs loads them alike; the figure is the median over the rounds of each
round's ratio (at least 9 rounds). A further side in the same rounds runs only our
update's matrix products (``matmuls_only``: the ops and shapes torch's profiler recorded,
on fresh operands): torchrl's update time over that is the ceiling of the ratio, what
ours would reach if everything but its matrix products (gates, activations, mixing,
loss, Adam, autograd, Python) took no time. Then the breakdown of one of our updates (torch's
profiler): the online and target forwards, the GNN message passing inside them, the
mixers, backward, optimizer, and the Python/dispatch overhead (wall time no kernel
accounts for). Each side's arithmetic per update (the FLOPs of its matrix products,
forward and backward, from the shapes the profiler recorded) is printed beside its rate, since the sides do not do the
same work: ours adds the GNN, one more round per sequence and double Q.

The process keeps freed memory as train.py does (``retain_freed_memory``, for every side
alike); ``--glibc-malloc-defaults`` measures with glibc's own thresholds, under which our
update page-faults its buffers in on every call (the page faults per update are printed).

Figures on this machine (2 cores): docs/benchmark/learner/bench_learner.txt.

torchrl is the ``bench`` extra: ``pip install torchrl==0.14.1 "tensordict>=0.14.3,<0.15"``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

import algos  # noqa: E402
from algos import networks  # noqa: E402
from algos.buffer import Episode, collate  # noqa: E402
from algos.training.memory import minor_faults, retain_freed_memory  # noqa: E402


def make_episodes(B: int, T: int, N: int, D: int, A: int, S: int, seed: int) -> list[Episode]:
    rng = np.random.default_rng(seed)
    eps = []
    for _ in range(B):
        adj = rng.random((T + 1, N, N)) < 0.3  # ~30% of the N^2 possible edges per round
        adj[0] = False  # no graph before the first round
        eps.append(
            Episode(
                obs=rng.standard_normal((T + 1, N, D)).astype(np.float32),
                avail=np.ones((T + 1, N, A), bool),
                state=rng.standard_normal((T + 1, S)).astype(np.float32),
                actions=rng.integers(0, A, (T, N)),
                rewards=rng.standard_normal(T).astype(np.float32),
                terminated=True,
                adj=adj,
            )
        )
    return eps


def interleaved_rates(
    steps: dict, updates: int, warmup: int, rounds: int
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Updates/s of each step function, measured in alternating rounds, so a machine
    shared with other jobs loads every side alike, and each side's minor page faults per
    update. ``steps[name] = (fn, scale)``: that side runs ``max(1, updates * scale)``
    updates per round."""
    for step, _ in steps.values():
        for _ in range(warmup):
            step()
    rates: dict[str, list[float]] = {name: [] for name in steps}
    faults = dict.fromkeys(steps, 0)
    done = dict.fromkeys(steps, 0)
    for _ in range(rounds):
        for name, (step, scale) in steps.items():
            n = max(1, int(updates * scale))
            f0, t0 = minor_faults(), time.perf_counter()
            for _ in range(n):
                step()
            rates[name].append(n / (time.perf_counter() - t0))
            faults[name] += minor_faults() - f0
            done[name] += n
    return rates, {name: faults[name] / done[name] for name in steps}


# The matrix products torch's profiler names, and how to call each on fresh operands of
# the recorded shapes: (operand count, call). In-place forms are replayed out of place, so
# a replay that runs them again and again does not accumulate into its operands.
MATMUL_OPS = {
    "aten::mm": (2, lambda a, b: torch.mm(a, b)),
    "aten::bmm": (2, lambda a, b: torch.bmm(a, b)),
    "aten::addmm": (3, lambda c, a, b: torch.addmm(c, a, b)),
    "aten::addmm_": (3, lambda c, a, b: torch.addmm(c, a, b)),
    "aten::baddbmm": (3, lambda c, a, b: torch.baddbmm(c, a, b)),
    "aten::baddbmm_": (3, lambda c, a, b: torch.baddbmm(c, a, b)),
}


def matmul_calls(step) -> list[tuple[str, list[tuple[int, ...]]]]:
    """The matrix products one call of ``step`` runs, in order: (op, operand shapes), from
    torch's profiler. Any other op whose name says it multiplies matrices is refused, so a
    replay never silently leaves work out."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        step()
    calls = []
    for e in prof.events():
        if e.name in MATMUL_OPS:
            n_operands = MATMUL_OPS[e.name][0]
            calls.append((e.name, [tuple(s) for s in e.input_shapes[:n_operands]]))
        elif _is_product(e.name):
            raise RuntimeError(f"matmul_calls: no replay for {e.name}; add it to MATMUL_OPS")
    return calls


def _is_product(name: str) -> bool:
    """aten::addbmm, aten::_addmm_activation, aten::mv, ...; not aten::linear or aten::matmul,
    which run through the products above."""
    if not name.startswith("aten::"):
        return False
    op = name.removeprefix("aten::").strip("_")
    return op.endswith(("mm", "mv")) or "mm_" in op or op in ("dot", "vdot")


def matmul_flops(calls: list[tuple[str, list[tuple[int, ...]]]]) -> int:
    """FLOPs of matrix products (``matmul_calls``'s records): 2 m k n per product, times the
    batch for bmm/baddbmm. torch's profiler (``with_flops``) gives the same figure for the
    out-of-place ops, but counts none for ``addmm_`` (the GRU backward's) and adds the
    elementwise ops' FLOPs into its total, so the count is made from the shapes."""
    total = 0
    for name, shapes in calls:
        a, b = shapes if MATMUL_OPS[name][0] == 2 else shapes[1:]
        total += 2 * a[-2] * a[-1] * b[-1] * (a[0] if len(a) == 3 else 1)
    return total


def flops_per_update(step) -> float:
    """Matrix-product FLOPs (forward and backward) of one call of ``step``."""
    return float(matmul_flops(matmul_calls(step)))


def _fresh_operands(shapes, gen: torch.Generator | None = None) -> list[torch.Tensor]:
    return [torch.randn(s, generator=gen) for s in shapes]


def matmuls_only(calls):
    """A function that runs only the matrix products ``calls`` (``matmul_calls(step)``)
    recorded: the same ops on operands of the same shapes (fresh, contiguous), nothing else. Its time is what those products cost on
    torch's CPU kernels, so ``other side's update / this`` bounds the ratio any
    implementation of ``step``'s arithmetic could reach (a transposed operand in the real
    update can be a little faster or slower than the contiguous one replayed)."""
    gen = torch.Generator().manual_seed(0)
    replays = [(MATMUL_OPS[name][1], _fresh_operands(shapes, gen)) for name, shapes in calls]

    def run():
        for op, operands in replays:
            op(*operands)

    return run


def product_table(calls, reps: int = 50) -> list[tuple[float, str, list[tuple[int, ...]], int, float]]:
    """Each distinct matrix product of ``calls`` (``matmul_calls(step)``), timed alone (``reps`` calls on fresh
    operands): (ms per update, op, shapes, calls per update, GFLOP/s), the costliest first.
    It shows which products run far below the machine's rate (a narrow output, tiny
    batched matrices), the part of the ceiling a different layout could still move."""
    from collections import Counter

    rows = []
    for (name, shapes), count in Counter((n, tuple(s)) for n, s in calls).items():
        op = MATMUL_OPS[name][1]
        operands = _fresh_operands(shapes)
        for _ in range(3):
            op(*operands)
        t0 = time.perf_counter()
        for _ in range(reps):
            op(*operands)
        per_call = (time.perf_counter() - t0) / reps
        flops = matmul_flops([(name, list(shapes))])
        rows.append((per_call * count * 1e3, name, list(shapes), count, flops / per_call / 1e9))
    return sorted(rows, key=lambda r: -r[0])


def build_ours(batch, spec, hidden: int, **overrides):
    cfg = {
        "hidden_dim": hidden,
        "batch_size": batch.batch_size,
        "learning_starts": batch.batch_size,
        "target_update_interval": 50,
        "save_buffer": False,
        **overrides,
    }
    return algos.build("qmix", spec, cfg, seed=0)


def update_breakdown(learner, batch, updates: int) -> tuple[float, list[tuple[str, float]]]:
    """Milliseconds per update: (wall, [(part, ms)]), from torch's profiler over ``updates``
    updates. Parts are labelled by wrapping the learner's pieces, the GNN and the GRU once
    per network; "matrix products" is the kernel time of every product in every part;
    "Python and dispatch overhead" is the wall time that no kernel (aten op) accounts for."""
    from torch.profiler import ProfilerActivity, profile, record_function

    def labelled(label, fn):
        def wrapper(*a, **k):
            with record_function(label if isinstance(label, str) else label()):
                return fn(*a, **k)

        return wrapper

    running = ["online"]  # which network's forward the GNN and GRU labels belong to
    agent_qs = learner._agent_qs

    def agent_qs_labelled(net, b):
        running[0] = "online" if net is learner.agent else "target"
        return labelled(f"{running[0]} forward", agent_qs)(net, b)

    learner._agent_qs = agent_qs_labelled
    gnn_label = lambda: f"  of which GNN message passing ({running[0]})"  # noqa: E731
    for net in (learner.agent, learner.target_agent):
        for conv in net.convs:  # edge-list layers (sage, gatv2)
            conv.forward = labelled(gnn_label, conv.forward)
    dense_graphconv = networks._dense_graphconv  # graphconv: looked up in the module at each call
    networks._dense_graphconv = labelled(gnn_label, dense_graphconv)
    learner._agent_inputs = labelled("batch preparation (once for both networks)", learner._agent_inputs)
    gru = networks.gru_sequence  # the agents' recurrence, looked up in the module at each call
    networks.gru_sequence = labelled(lambda: f"  of which GRU over the rounds ({running[0]})", gru)
    for mixer in (learner.mixer, learner.target_mixer):
        mixer.forward = labelled("mixers (online + target, forward)", mixer.forward)
    learner.optimizer.step = labelled("optimizer (Adam step)", learner.optimizer.step)
    backward = torch.Tensor.backward
    torch.Tensor.backward = lambda self, *a, **k: labelled("backward", backward)(self, *a, **k)
    try:
        for _ in range(2):
            learner.train_on_batch(batch)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            t0 = time.perf_counter()
            for _ in range(updates):
                learner.train_on_batch(batch)
            wall = time.perf_counter() - t0
    finally:
        torch.Tensor.backward = backward
        networks.gru_sequence = gru
        networks._dense_graphconv = dense_graphconv
    events = prof.key_averages()
    ms = lambda x: x / 1e3 / updates  # noqa: E731  (profiler times are in microseconds)
    order = [
        "batch preparation (once for both networks)",
        "online forward",
        "  of which GNN message passing (online)",
        "  of which GRU over the rounds (online)",
        "target forward",
        "  of which GNN message passing (target)",
        "  of which GRU over the rounds (target)",
        "mixers (online + target, forward)",
        "backward",
        "optimizer (Adam step)",
    ]
    totals = {e.key: e.cpu_time_total for e in events}
    kernels = sum(e.self_cpu_time_total for e in events if e.key.startswith("aten::"))
    products = sum(e.self_cpu_time_total for e in events if e.key in MATMUL_OPS)
    parts = [(k, ms(totals.get(k, 0.0))) for k in order]
    parts.append(("matrix products (kernel time, all parts above)", ms(products)))
    parts.append(("Python and dispatch overhead (wall - kernels)", max(wall * 1e3 / updates - ms(kernels), 0.0)))
    return wall * 1e3 / updates, parts


def ours_step(batch, spec, hidden: int, per_episode_loop: bool = False, **overrides):
    learner = build_ours(batch, spec, hidden, **overrides)
    if per_episode_loop:
        # Agent-Q-Mix's structure: the agent network called once per episode in a Python
        # loop (same arithmetic, same loss) -- what batching the graph avoids.
        prepare, batched = learner._agent_inputs, learner._agent_qs
        fields = ("obs", "avail", "state", "actions", "rewards", "terminated", "filled", "adj", "block_end")

        def looped(net, b):
            parts = []
            for i in range(b.batch_size):
                one = type(b)(*(getattr(b, f)[i : i + 1] for f in fields))
                parts.append(batched(net, prepare(one)))
            return torch.cat(parts)

        learner._agent_inputs = lambda b: b  # each episode is prepared inside the loop
        learner._agent_qs = looped
    return lambda: learner.train_on_batch(batch)


class GRUAgent(nn.Module):
    """encoder -> GRU over rounds -> MLP, shared by agents; input [B, T, N, D] -> [B, T, N, A]."""

    def __init__(self, D: int, N: int, A: int, H: int):
        super().__init__()
        self.N = N
        self.encoder = nn.Linear(D + N, H)
        self.rnn = nn.GRU(H, H, batch_first=True)
        self.head = nn.Sequential(nn.Linear(H, H), nn.ReLU(), nn.Linear(H, A))
        self.register_buffer("ids", torch.eye(N), persistent=False)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        B, T, N, _ = obs.shape
        x = torch.relu(self.encoder(torch.cat([obs, self.ids.expand(B, T, N, N)], -1)))
        h, _ = self.rnn(x.permute(0, 2, 1, 3).reshape(B * N, T, -1))
        return self.head(h.reshape(B, N, T, -1).permute(0, 2, 1, 3))


def torchrl_step(batch, N: int, D: int, A: int, S: int, hidden: int):
    from tensordict import TensorDict
    from tensordict.nn import TensorDictModule
    from torchrl.modules import QValueModule, SafeSequential
    from torchrl.modules.models.multiagent import QMixer
    from torchrl.objectives import HardUpdate, ValueEstimators
    from torchrl.objectives.multiagent import QMixerLoss

    torch.manual_seed(0)
    module = TensorDictModule(
        GRUAgent(D, N, A, hidden), in_keys=[("agents", "observation")], out_keys=[("agents", "action_value")]
    )
    value_module = QValueModule(
        action_value_key=("agents", "action_value"),
        out_keys=[("agents", "action"), ("agents", "action_value"), ("agents", "chosen_action_value")],
        action_space="categorical",
    )
    qnet = SafeSequential(module, value_module)
    mixer = TensorDictModule(
        QMixer(state_shape=(S,), mixing_embed_dim=32, n_agents=N, device="cpu"),
        in_keys=[("agents", "chosen_action_value"), "state"],
        out_keys=["chosen_action_value"],
    )
    loss_fn = QMixerLoss(qnet, mixer, action_space="categorical", delay_value=True)
    loss_fn.make_value_estimator(ValueEstimators.TD0, gamma=0.99)
    target_updater = HardUpdate(loss_fn, value_network_update_interval=50)
    optim = torch.optim.Adam(loss_fn.parameters(), lr=5e-4)

    B, T = batch.batch_size, batch.max_t
    c = lambda x: x.contiguous()  # noqa: E731  (torchrl's mixer .view()s its inputs)
    done = batch.terminated.bool().unsqueeze(-1)
    td = TensorDict(
        {
            "agents": TensorDict({"observation": c(batch.obs[:, :-1]), "action": batch.actions}, [B, T, N]),
            "state": c(batch.state[:, :-1]),
            "next": TensorDict(
                {
                    "agents": TensorDict({"observation": c(batch.obs[:, 1:])}, [B, T, N]),
                    "state": c(batch.state[:, 1:]),
                    "reward": batch.rewards.unsqueeze(-1),
                    "done": done,
                    "terminated": done,
                },
                [B, T],
            ),
        },
        [B, T],
    )

    def step():
        loss = loss_fn(td)["loss"]
        optim.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(loss_fn.parameters(), 10.0)
        optim.step()
        target_updater.step()

    return step


def compare(batch, spec, args, N, D, A, S) -> None:
    steps = {
        "ours": (ours_step(batch, spec, args.hidden), 1.0),
        "ours_nognn": (ours_step(batch, spec, args.hidden, gnn_layer="none"), 1.0),
        "ours_loop": (ours_step(batch, spec, args.hidden, per_episode_loop=True), 0.2),
    }
    products = matmul_calls(steps["ours"][0])
    steps["ours_matmuls"] = (matmuls_only(products), 1.0)
    try:
        import tensordict  # noqa: F401
        import torchrl
    except ImportError as e:
        torchrl = None
        print(
            f"  torchrl: NOT INSTALLED ({e}) -- no comparison. Install the bench extra:\n"
            '    pip install torchrl==0.14.1 "tensordict>=0.14.3,<0.15"'
        )
    else:
        steps["torchrl"] = (torchrl_step(batch, N, D, A, S, args.hidden), 1.0)
    rates, faults = interleaved_rates(steps, args.updates, args.warmup, args.rounds)
    med = {k: float(np.median(v)) for k, v in rates.items()}
    fmt = lambda k: f"(rounds: {' '.join(f'{x:.1f}' for x in rates[k])}; {faults[k]:.0f} page faults/update)"  # noqa: E731
    print(f"  ours (GNN-GRU agent, double Q):                 {med['ours']:6.1f} updates/s   {fmt('ours')}")
    print(f"  ours without the GNN (torchrl's agent shape):   {med['ours_nognn']:6.1f} updates/s   {fmt('ours_nognn')}")
    print(f"  ours, agent called per episode (Agent-Q-Mix):   {med['ours_loop']:6.1f} updates/s   {fmt('ours_loop')}")
    print(
        f"  ours, its {len(products)} matrix products alone:          {med['ours_matmuls']:6.1f} updates/s   "
        f"({1e3 / med['ours_matmuls']:.1f} of the update's {1e3 / med['ours']:.1f} ms: the same ops on the same shapes, nothing else)"
    )
    if torchrl is None:
        return
    print(
        f"  torchrl {torchrl.__version__} (GRU agent, QMixer + QMixerLoss): {med['torchrl']:6.1f} updates/s   {fmt('torchrl')}"
    )
    work = {k: flops_per_update(steps[k][0]) for k in ("ours", "ours_nognn", "torchrl")}
    print(
        "  arithmetic per update (matmul FLOPs, forward + backward): "
        + ", ".join(f"{k} {work[k] / 1e6:.0f} M ({work[k] * med[k] / 1e9:.1f} GFLOP/s)" for k in work)
        + f"; ours does {work['ours'] / work['torchrl']:.2f}x torchrl's"
    )
    ratios = [a / b for a, b in zip(rates["ours"], rates["torchrl"])]
    ratios_nognn = [a / b for a, b in zip(rates["ours_nognn"], rates["torchrl"])]
    ceiling = [m / b for m, b in zip(rates["ours_matmuls"], rates["torchrl"])]
    print(
        f"  ratio ours / torchrl, median of {len(ratios)} alternating rounds: {np.median(ratios):.2f}x "
        f"(per round: {' '.join(f'{r:.2f}' for r in ratios)}; target >= 1.5x)"
    )
    print(
        f"  ceiling of that ratio, torchrl's update / our products alone: {np.median(ceiling):.2f}x "
        f"(per round: {' '.join(f'{r:.2f}' for r in ceiling)}): what our update would reach if everything "
        "but its matrix products took no time"
    )
    print(
        f"  ratio ours without GNN / torchrl: {np.median(ratios_nognn):.2f}x; batched / per-episode loop: {med['ours'] / med['ours_loop']:.1f}x"
    )


def load() -> str:
    """The machine's load averages (1, 5, 15 min) and core count: timing figures on a
    shared machine are only comparable with this beside them."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batch", type=int, default=32, help="episodes per update")
    p.add_argument("--rounds-per-episode", type=int, default=20, help="rounds per episode")
    p.add_argument("--agents", type=int, default=4)
    p.add_argument("--obs-dim", type=int, default=64)
    p.add_argument("--state-dim", type=int, default=128)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--updates", type=int, default=10, help="updates per timed round")
    p.add_argument("--rounds", type=int, default=9, help="alternating timed rounds per side (>= 9 for a stable median)")
    p.add_argument("--breakdown-updates", type=int, default=5, help="updates profiled for the time breakdown (0: none)")
    p.add_argument("--breakdown-only", action="store_true", help="skip the comparison, print only the breakdown")
    p.add_argument(
        "--products",
        action="store_true",
        help="also time each distinct matrix product of our update alone (GFLOP/s per shape)",
    )
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument(
        "--glibc-malloc-defaults",
        action="store_true",
        help="leave glibc's malloc thresholds as they are (train.py's retain_freed_memory=false); "
        "by default the process keeps freed memory as train.py does, for every side alike",
    )
    args = p.parse_args()
    if args.rounds < 9:
        p.error(
            f"--rounds must be >= 9 (the median of fewer alternating rounds swings with the machine's load), got {args.rounds}"
        )
    torch.set_num_threads(args.threads)
    retained = False if args.glibc_malloc_defaults else retain_freed_memory()
    B, T, N, D, S = args.batch, args.rounds_per_episode, args.agents, args.obs_dim, args.state_dim
    A = 5 + N  # the report env's action count
    batch = collate(make_episodes(B, T, N, D, A, S, seed=0))
    spec = algos.EnvSpec(agents=[f"agent_{i}" for i in range(N)], obs_dim=D, n_actions=A, state_dim=S)
    print(
        f"QMIX update, {B} episodes x {T} rounds x {N} agents, obs {D}, state {S}, {A} actions, hidden {args.hidden}, {args.threads} thread(s), "
        f"freed memory {'kept in the process (as train.py does)' if retained else 'returned per glibc defaults'}"
    )
    print(f"  at start: {load()}")
    if not args.breakdown_only:
        compare(batch, spec, args, N, D, A, S)
        print(f"  after the comparison: {load()}")
    if args.products:
        print(
            "  our update's matrix products, each timed alone (ms per update, calls, GFLOP/s, op and operand shapes):"
        )
        for ms_per_update, name, shapes, count, rate in product_table(
            matmul_calls(ours_step(batch, spec, args.hidden))
        ):
            print(f"    {ms_per_update:6.2f} ms  x{count:<3d} {rate:6.1f} GFLOP/s  {name} {shapes}")
    if args.breakdown_updates > 0:
        wall, parts = update_breakdown(build_ours(batch, spec, args.hidden), batch, args.breakdown_updates)
        print(
            f"  where one of our updates goes ({args.breakdown_updates} profiled updates, {wall:.1f} ms each with the profiler on;"
        )
        print("  forward parts exclude their backward, which is all in 'backward'):")
        for name, t in parts:
            print(f"    {name:48s} {t:7.1f} ms  {100 * t / wall:5.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
