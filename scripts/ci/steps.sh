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
      echo "$? $(($(date +%s) - started))" >"$ci_logs/${names[$i]}.status"
    ) &
    pids+=($!)
  done
  wait "${pids[@]}" || true
  local failed=() rows=() code seconds
  for i in "${!names[@]}"; do
    read -r code seconds <"$ci_logs/${names[$i]}.status"
    printf '\n--- %s: exit %s in %ss ---\n' "${names[$i]}" "$code" "$seconds"
    cat "$ci_logs/${names[$i]}.log"
    rows+=("$seconds	  ‖ ${names[$i]}")
    [ "$code" = 0 ] || failed+=("${names[$i]}")
  done
  ci_timings+=("$(($(date +%s) - group_started))	at once:" "${rows[@]}")
  if [ ${#failed[@]} -gt 0 ]; then
    echo "failed: ${failed[*]}" >&2
    return 1
  fi
}

ci_timing_table() {
  step_end
  printf '\n==> where the time went (seconds; ‖ ran at once with the rows beside it)\n'
  printf '%s\n' "${ci_timings[@]}" | awk -F'\t' '{ printf "%6s  %s\n", $1, $2 }'
  printf '%6s  total\n' "$(($(date +%s) - ci_started))"
}
