#!/usr/bin/env python3
"""Real PyTorch profiler (Kineto) traces of a small pipeline-parallel run on CPU, for ppsim's tests.

Spawns P processes (gloo, CPU), each one stage of a pipeline of Linear layers, and runs a few
training steps of a schedule over M microbatches under torch.profiler, exporting one Chrome trace
per rank (gzipped). Activations and their gradients travel with dist.isend (waited for at the end
of the step) and dist.recv.

The actions are annotated with the record_function names PyTorch's own pipelining code uses
(torch/distributed/pipelining/schedules.py, checked at pytorch/pytorch commit
00722e648b740f91d0e71494baa17891749fd291):
  --schedule gpipe: ScheduleGPipe._step_microbatches, "Forward {i}" and "Backward {i}", each range
                    holding the receive it waits for, the computation and the send it issues;
  --schedule 1f1b:  _PipelineScheduleRuntime._step_microbatches, "PP:" + str(_Action) for every
                    action of the order with communication (_add_send_recv): "PP:0F1", "PP:1B0",
                    "PP:0SEND_F1", "PP:1RECV_F1", "PP:1SEND_B0", "PP:0RECV_B0".
torch 1.13 (Debian's python3-torch, used to make the committed traces) has no
torch.distributed.pipelining: only the annotation names are emulated, the runtime is this file.

Usage: python3 make_traces.py --schedule gpipe|1f1b --out DIR [--ranks 2] [--microbatches 4]
Needs torch (apt-get install python3-torch); not a build or CI dependency.
"""
import argparse
import gzip
import os
import shutil
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.profiler import ProfilerActivity, profile, record_function, schedule

HIDDEN = 512
MICROBATCH = 64
LAYERS_PER_STAGE = 4
WARMUP_STEPS = 1
ACTIVE_STEPS = 4


def one_f_one_b_order(stage, num_stages, num_microbatches):
    """Schedule1F1B's compute order of one stage: warm-up forwards, then B/F pairs."""
    warmup = min(num_microbatches, num_stages - stage)
    order = [("F", m) for m in range(warmup)]
    f, b = warmup, 0
    while b < num_microbatches:
        order.append(("B", b))
        b += 1
        if f < num_microbatches:
            order.append(("F", f))
            f += 1
    return order


def gpipe_order(num_microbatches):
    return [("F", m) for m in range(num_microbatches)] + [("B", m) for m in range(num_microbatches)]


class Stage:
    def __init__(self, rank, world):
        torch.manual_seed(rank)
        layers = []
        for _ in range(LAYERS_PER_STAGE):
            layers += [torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU()]
        self.module = torch.nn.Sequential(*layers)
        self.optimizer = torch.optim.SGD(self.module.parameters(), lr=1e-3)
        self.rank, self.world = rank, world
        self.inputs, self.outputs = {}, {}
        self.sends = []  # isend works, waited for at the end of the step (as torch's runtime)

    def forward(self, m, send):
        """The forward of microbatch m: receive, compute, send (send=False: the caller sends)."""
        if self.rank == 0:
            x = torch.randn(MICROBATCH, HIDDEN)
        else:
            x = torch.empty(MICROBATCH, HIDDEN)
            dist.recv(x, src=self.rank - 1)
        x.requires_grad_(self.rank > 0)
        y = self.module(x)
        self.inputs[m], self.outputs[m] = x, y
        if send:
            self.send_forward(m)

    def send_forward(self, m):
        if self.rank + 1 < self.world:
            self.sends.append(dist.isend(self.outputs[m].detach(), dst=self.rank + 1))

    def backward(self, m, send):
        y = self.outputs.pop(m)
        if self.rank + 1 == self.world:
            y.pow(2).mean().backward()
        else:
            g = torch.empty_like(y)
            dist.recv(g, src=self.rank + 1)
            y.backward(g)
        self.grad = self.inputs.pop(m).grad
        if send:
            self.send_backward(m)

    def send_backward(self, m):
        if self.rank > 0:
            self.sends.append(dist.isend(self.grad, dst=self.rank - 1))

    def wait_sends(self):
        for work in self.sends:
            work.wait()
        self.sends = []


def gpipe_step(stage, num_microbatches):
    for m in range(num_microbatches):
        with record_function(f"Forward {m}"):
            stage.forward(m, send=True)
    for m in range(num_microbatches):
        with record_function(f"Backward {m}"):
            stage.backward(m, send=True)


def one_f_one_b_step(stage, num_microbatches):
    # The runtime's order with communication: an F's SEND_F right after it, a B's SEND_B right
    # after it; the receiving rank's RECV_F / RECV_B are folded into the F / B that waits on them
    # (the runtime posts the receive in RECV_F and waits in F).
    s = stage.rank
    for kind, m in one_f_one_b_order(s, stage.world, num_microbatches):
        if kind == "F":
            with record_function(f"PP:{s}F{m}"):
                stage.forward(m, send=False)
            if s + 1 < stage.world:
                with record_function(f"PP:{s}SEND_F{m}"):
                    stage.send_forward(m)
        else:
            with record_function(f"PP:{s}B{m}"):
                stage.backward(m, send=False)
            if s > 0:
                with record_function(f"PP:{s}SEND_B{m}"):
                    stage.send_backward(m)


def worker(rank, world, args, init_file):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                            world_size=world)
    stage = Stage(rank, world)
    step = gpipe_step if args.schedule == "gpipe" else one_f_one_b_step

    def export(prof):
        path = os.path.join(args.out, f"rank{rank}.pt.trace.json")
        prof.export_chrome_trace(path)
        with open(path, "rb") as src, gzip.GzipFile(path + ".gz", "wb", mtime=0) as dst:
            shutil.copyfileobj(src, dst)
        os.remove(path)

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                 schedule=schedule(wait=0, warmup=WARMUP_STEPS, active=ACTIVE_STEPS),
                 on_trace_ready=export) as prof:
        for _ in range(WARMUP_STEPS + ACTIVE_STEPS):
            stage.optimizer.zero_grad()
            step(stage, args.microbatches)
            stage.wait_sends()
            stage.optimizer.step()
            dist.barrier()
            prof.step()
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schedule", choices=["gpipe", "1f1b"], required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--microbatches", type=int, default=4)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    init_file = os.path.join(tempfile.mkdtemp(), "init")
    mp.spawn(worker, args=(args.ranks, args, init_file), nprocs=args.ranks, join=True)
    print(f"torch {torch.__version__}: wrote {args.ranks} traces to {args.out}")


if __name__ == "__main__":
    main()
