#!/usr/bin/env bash
# The programs of the process sandbox (agentserver/sandbox/launcher.py): bubblewrap, slirp4netns (the `outbound`
# network) and util-linux's setpriv/prlimit/nsenter/unshare. Installed with apt when missing and running as
# root; otherwise says what to do. Skipped entirely with AGENTSERVER_SANDBOX=off.
set -uo pipefail
[ "${AGENTSERVER_SANDBOX:-on}" = off ] && exit 0
missing=()
command -v "${AGENTSERVER_SANDBOX_BWRAP:-bwrap}" >/dev/null 2>&1 || missing+=(bubblewrap)
command -v slirp4netns >/dev/null 2>&1 || missing+=(slirp4netns)
for tool in setpriv prlimit nsenter unshare; do
  command -v "$tool" >/dev/null 2>&1 || { missing+=(util-linux); break; }
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null); then
    exit 0
  fi
fi
echo "warning: the process sandbox needs: ${missing[*]} (Debian/Ubuntu: sudo apt-get install ${missing[*]})." >&2
echo "         Until then PTYs, shells, the bash tool, git and MCP servers answer 503 SandboxUnavailableError;" >&2
echo "         AGENTSERVER_SANDBOX=off runs them unconfined (unsafe on a shared server)." >&2
exit 0
