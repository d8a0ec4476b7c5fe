# Sourced by .ci/run: named steps with their times, steps that run at once, and the timing table
# printed at the end (also when a step fails, so a slow or failing run says where its time went).

ci_started=$(date +%s)
ci_logs="${CI_LOGS:-results/ci}"
ci_timings=()
ci_current=""
ci_current_started=0
mkdir -p "$ci_logs"

# Ends the running step (recording its time) and starts the next one.
step() {
  step_end
  ci_current="$*"
  ci_current_started=$(date +%s)
  printf '\n==> %s (+%ss)\n' "$*" "$((ci_current_started - ci_started))"
}

step_end() {
  if [ -n "$ci_current" ]; then
    ci_timings+=("$(($(date +%s) - ci_current_started))	$ci_current")
    ci_current=""
  fi
}

# together NAME 'COMMAND' NAME 'COMMAND' …: runs the commands at the same time, each with its
# output in $ci_logs/NAME.log, then prints every log in turn with its time and exit code and fails
# if any command failed. For checks that mostly wait (on processes they start, on sleeps) or are
# single-threaded, so that on two cores several of them take little longer than the slowest.
together() {
  step_end
  local names=() commands=() pids=() group_started
  while [ $# -gt 0 ]; do
    names+=("$1")
    commands+=("$2")
    shift 2
  done
  group_started=$(date +%s)
  printf '\n==> at once: %s (+%ss)\n' "${names[*]}" "$((group_started - ci_started))"
  local i
  for i in "${!names[@]}"; do
    (
      started=$(date +%s)
      set +e
      bash -c "set -euo pipefail; ${commands[$i]}" >"$ci_logs/${names[$i]}.log" 2>&1
      code=$?
      # `times` here, not in a $(…): a command substitution's own subshell has no children.
      times >"$ci_logs/${names[$i]}.times"
      echo "$code $(($(date +%s) - started)) $(cpu_seconds <"$ci_logs/${names[$i]}.times")" \
        >"$ci_logs/${names[$i]}.status"
    ) &
    pids+=($!)
  done
  wait "${pids[@]}" || true
  local failed=() rows=() code seconds cpu
  for i in "${!names[@]}"; do
    read -r code seconds cpu <"$ci_logs/${names[$i]}.status"
    printf '\n--- %s: exit %s in %ss (CPU %ss) ---\n' "${names[$i]}" "$code" "$seconds" "$cpu"
    cat "$ci_logs/${names[$i]}.log"
    rows+=("$seconds	  ‖ ${names[$i]} (CPU ${cpu} s)")
    [ "$code" = 0 ] || failed+=("${names[$i]}")
  done
  ci_timings+=("$(($(date +%s) - group_started))	at once:" "${rows[@]}")
  if [ ${#failed[@]} -gt 0 ]; then
    # Each failed log's end again, last: a reader of the run's tail (a CI page cut to its last
    # lines) sees why it failed without the other checks' logs in between.
    local name
    for name in "${failed[@]}"; do
      printf '\n--- %s failed; the end of its log (%s/%s.log) ---\n' "$name" "$ci_logs" "$name"
      tail -n 25 "$ci_logs/$name.log"
    done
    echo "failed: ${failed[*]}" >&2
    return 1
  fi
}

# User + system CPU seconds of a shell's finished children, from the output of `times` (the
# processes a step started and waited for; Postgres and Redis, run as services, are not among them).
cpu_seconds() {
  tail -n 1 | awk '{
    total = 0
    for (i = 1; i <= 2; i++) { split($i, part, "m"); sub("s", "", part[2]); total += part[1] * 60 + part[2] }
    printf "%.0f", total
  }'
}

# Busy and total jiffies of the whole machine (every core), from /proc/stat.
machine_cpu() {
  awk '/^cpu / { busy = $2 + $3 + $4 + $7 + $8; total = busy + $5 + $6; print busy, total }' /proc/stat
}
read -r ci_busy_started ci_total_started <<<"$(machine_cpu)"

ci_timing_table() {
  step_end
  printf '\n==> where the time went (seconds; ‖ ran at once with the rows beside it)\n'
  printf '%s\n' "${ci_timings[@]}" | awk -F'\t' '{ printf "%6s  %s\n", $1, $2 }'
  printf '%6s  total\n' "$(($(date +%s) - ci_started))"
  local busy total
  read -r busy total <<<"$(machine_cpu)"
  printf 'machine CPU busy over the run: %s %% of %s cores\n' \
    "$(((busy - ci_busy_started) * 100 / (total - ci_total_started + 1)))" "$(nproc)"
}
