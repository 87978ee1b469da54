"""Taking turns with other benchmark processes (bench/injector/turns_bench.py).

Step times of separate processes on the GPU VMs drift by more than the few percent a tracing
variant costs (untraced ResNet-50 runs of one session spread 19.6-27.5 ms/step), so comparing
one process per variant against another says little. Under turns_bench.py every variant's
process stays alive and they run in strict alternation, a fraction of a second each: drift
reaches every variant alike, and each cycle of turns gives one ratio per variant.

A workload serves turns when TURN_FDS="READ_FD,WRITE_FD" is set. It reads one command per line:
  warm T    run steps for T seconds (the sampler measures every signature; nothing is timed)
  run N     synchronize, time N steps, synchronize; reply "ms/step X"
  quit      return (the workload then prints its usual summary and exits)
and replies "ready" first, then one line per command.
"""
import os
import time


def active():
    return bool(os.environ.get("TURN_FDS"))


def serve(step, synchronize, profiler=None):
    """Serves turns until 'quit'. `profiler`, if given, makes a context manager (torch.profiler)
    entered before the first timed turn and left after the last, as the workload's own timed
    loop does."""
    read_fd, write_fd = (int(fd) for fd in os.environ["TURN_FDS"].split(","))
    commands = os.fdopen(read_fd, "r")
    replies = os.fdopen(write_fd, "w")

    def reply(text):
        replies.write(text + "\n")
        replies.flush()

    timed = None
    reply("ready")
    for line in commands:
        words = line.split()
        if not words:
            continue
        if words[0] == "warm":
            deadline = time.monotonic() + float(words[1])
            steps = 0
            while time.monotonic() < deadline:
                step()
                steps += 1
                if steps % 10 == 0:
                    synchronize()
            synchronize()
            reply(f"warm {steps}")
        elif words[0] == "run":
            if timed is None:
                timed = profiler() if profiler is not None else None
                timed = timed if timed is not None else _Nothing()
                timed.__enter__()
            n = int(words[1])
            synchronize()
            t0 = time.perf_counter()
            for _ in range(n):
                step()
            synchronize()
            reply(f"ms/step {1000 * (time.perf_counter() - t0) / n:.4f}")
        elif words[0] == "quit":
            break
        else:
            reply(f"error unknown command {words[0]!r}")
    if timed is not None:
        timed.__exit__(None, None, None)
    reply("bye")
    replies.close()
    commands.close()


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
