"""What one server ran more or less than another (bench/trace/sitecustomize.py's counts): give the trace files
of a run; the two servers are the two files with the most event log writes, `after` the one whose database has
usage records (this checkout's), and the table is after − before, per statement or hand-off, largest first."""
import json
import sys


def main(paths: list[str]) -> None:
    servers = []
    for path in paths:
        with open(path) as trace:
            counts = json.load(trace)
        writes = sum(n for key, n in counts.items() if key.startswith('INSERT INTO "agentserver_eventlog"'))
        servers.append((writes, "usage_app_usagerecord" in json.dumps(counts), path, counts))
    servers.sort(key=lambda server: server[0], reverse=True)
    if len(servers) < 2:
        sys.exit("needs the trace files of two servers")
    (_, _, a_path, a), (_, _, b_path, b) = sorted(servers[:2], key=lambda server: not server[1])
    print(f"after {a_path}: {sum(a.values())}, before {b_path}: {sum(b.values())}")
    print("| after − before | after | before | statement or hand-off |\n|---|---|---|---|")
    keys = sorted(set(a) | set(b), key=lambda key: (-(a.get(key, 0) - b.get(key, 0)), key))
    for key in keys:
        if a.get(key, 0) != b.get(key, 0) and "SAVEPOINT" not in key:
            print(f"| {a.get(key, 0) - b.get(key, 0):+d} | {a.get(key, 0)} | {b.get(key, 0)} | {key[:200]} |")


if __name__ == "__main__":
    main(sys.argv[1:])
