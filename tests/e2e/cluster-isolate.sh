# shellcheck shell=bash
# Sourced by the cluster scenarios before harness.sh starts its manager.
# Managers started from the same cgroup share their units' cgroups (with a
# legacy or hybrid hierarchy, /app.slice/sdlive-cluster@a.service): a second
# harness running at the same time (another build tree, another scenario
# with cluster members) would have its manager kill this run's members and
# the other way round. A cgroup of this run's own, entered before the
# manager starts, keeps them apart; empty ones of finished runs are removed.
cluster_isolate_cgroup() {
  local hierarchy old
  [[ -z ${SDLIVE_E2E_NAMESPACE:-} ]] || return 0
  for hierarchy in /sys/fs/cgroup/systemd /sys/fs/cgroup/unified; do
    [[ -w $hierarchy/cgroup.procs ]] || continue
    for old in "$hierarchy"/sdlive-e2e-cluster-*; do
      [[ -d $old ]] && find "$old" -depth -type d -exec rmdir {} + 2>/dev/null
    done
    mkdir -p "$hierarchy/sdlive-e2e-cluster-$$" &&
      echo $$ >"$hierarchy/sdlive-e2e-cluster-$$/cgroup.procs" ||
      printf 'e2e: cannot isolate this run in a cgroup of its own under %s\n' "$hierarchy" >&2
  done
}
cluster_isolate_cgroup
