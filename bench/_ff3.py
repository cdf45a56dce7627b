import sys, time, statistics
from bench.app_terminal import AppTerminal, FakeModel, app_env, zcoder_argv
from bench.harness import workspace
names = sys.argv[2:]
res = {n: [] for n in names}
with workspace("za") as space:
    model = FakeModel(space)
    env = app_env(space, model.url); project = space.project("proj")
    for n in range(int(sys.argv[1])):
        for name in names:
            term = AppTerminal([sys.executable, "/tmp/var.py"], project, {**env, "VARIANT": name})
            try:
                res[name].append(term.wait_text("Enter send", timeout=30) - term.started)
                time.sleep(0.3)
            finally:
                term.close()
    model.close()
for k, v in res.items():
    v.sort(); print(k, "median", round(statistics.median(v)*1000), "p90", round(v[int(len(v)*0.9)-1]*1000))
