# The stages of a CI run and their time budgets, sourced by .ci/run.
#
#   plan NAME BUDGET_SECONDS WHAT   declare a stage, in the order of the table
#   stage NAME COMMAND [ARG...]     run it in the foreground; a failure ends the run
#   stage_start NAME COMMAND...     start it in the background, its output kept
#   stage_join NAME                 wait for it, print its output; a failure ends the run
#
# When the run ends, however it ends (a stage failed, a signal), a table says
# each stage's time against its budget, what it came to, and how much of CI's
# hard limit the run used. Budgets are for a fresh machine: no package, no
# cache, no build directory. A stage past its budget says so there.

readonly CI_LIMIT_SECONDS=5400 # CI's hard limit: a run past it does not land
readonly CI_BUDGET_SECONDS=2400 # what the run is kept within (CONTRIBUTING)
ci_started=$SECONDS
ci_logs=${CI_LOGS:-ci-logs}
mkdir -p "$ci_logs"

declare -a stage_order=()
declare -A stage_budget=() stage_what=() stage_seconds=() stage_result=() stage_began=() stage_pid=()

plan() {
  stage_order+=("$1")
  stage_budget[$1]=$2
  stage_what[$1]=$3
  stage_result[$1]="not run"
}

stage_known() {
  [ -n "${stage_budget[$1]+set}" ] || { echo "ci: no stage '$1' planned" >&2; exit 2; }
}

stage_begin() {
  stage_known "$1"
  stage_began[$1]=$SECONDS
  stage_result[$1]=running
  echo "=== $1: ${stage_what[$1]} (budget ${stage_budget[$1]} s)"
}

# Records how the stage ended; a failure ends the run (the table follows).
stage_end() {
  local name=$1 status=$2
  stage_seconds[$name]=$((SECONDS - stage_began[$name]))
  if [ "$status" -eq 0 ]; then
    stage_result[$name]=passed
    echo "=== $name: passed in ${stage_seconds[$name]} s"
  else
    stage_result[$name]="FAILED ($status)"
    echo "=== $name: FAILED (exit $status) after ${stage_seconds[$name]} s"
    exit 1
  fi
}

stage() {
  local name=$1 status=0
  shift
  stage_begin "$name"
  "$@" || status=$?
  stage_end "$name" "$status"
}

# Its output goes to a log, printed whole when it is joined: two stages'
# lines never interleave.
stage_start() {
  local name=$1
  shift
  stage_begin "$name"
  echo "    (in the background; its output follows when it is joined)"
  # A process group of its own (setsid), so that what it started ends with it.
  setsid "$@" >"$ci_logs/$name.log" 2>&1 &
  stage_pid[$name]=$!
}

stage_join() {
  local name=$1 status=0
  stage_known "$name"
  wait "${stage_pid[$name]}" || status=$?
  unset "stage_pid[$name]"
  echo "=== $name: its output"
  cat "$ci_logs/$name.log"
  stage_end "$name" "$status"
}

ci_table() {
  local name spent over total=$((SECONDS - ci_started))
  # A stage still in the background when the run ends goes with it.
  for name in "${!stage_pid[@]}"; do
    kill -- "-${stage_pid[$name]}" 2>/dev/null || true
    stage_seconds[$name]=$((SECONDS - stage_began[$name]))
    stage_result[$name]="stopped: the run ended"
  done
  echo
  echo "=== CI stages (budgets for a fresh machine; CONTRIBUTING says what each runs)"
  printf '%-16s %8s %8s  %s\n' stage budget time result
  for name in "${stage_order[@]}"; do
    [ "${stage_result[$name]}" != running ] || stage_seconds[$name]=$((SECONDS - stage_began[$name]))
    spent=${stage_seconds[$name]:-}
    over=""
    if [ -n "$spent" ] && [ "$spent" -gt "${stage_budget[$name]}" ]; then
      over=", OVER BUDGET by $((spent - stage_budget[$name])) s"
    fi
    printf '%-16s %6s s %8s  %s\n' "$name" "${stage_budget[$name]}" "${spent:+$spent s}" "${stage_result[$name]}$over"
  done
  printf '%-16s %6s s %6s s\n' total "$CI_BUDGET_SECONDS" "$total"
  echo "This run used $total s, $((total * 100 / CI_LIMIT_SECONDS)) % of CI's $((CI_LIMIT_SECONDS / 60))-minute limit" \
    "(budget: $((CI_BUDGET_SECONDS / 60)) minutes)$([ "$total" -le "$CI_BUDGET_SECONDS" ] || echo ', OVER BUDGET')."
}
trap ci_table EXIT
# A run stopped by CI's timeout or by hand still prints the table.
trap 'exit 130' INT
trap 'exit 143' TERM
