#!/usr/bin/env bash
# Review beyond a stage, end to end on the bundled examples (README "Review campaigns, reports
# and verifier families"): the reviewed-essay samples go through their escalation review stage;
# an audit campaign samples their runs and a single expert judges them; the report compares the
# two protocols from the ledger; a verifier gets two contract versions. Every number printed is
# computed by assay from the ledger. Usage: examples/review/walkthrough.sh [WORKDIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="${1:-$(mktemp -d)}"
mkdir -p "$work"
export ASSAY_DB="sqlite:///$work/ledger.db" COLUMNS="${COLUMNS:-110}"
assay="${ASSAY:-$root/.venv/bin/assay}"
py="${PYTHON:-$root/.venv/bin/python}"
essay="$root/examples/problems/reviewed-essay"
field() { "$py" -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1], {'d': d}))" "$1"; }

"$assay" problem publish "$essay" --as author >/dev/null
for user in rev1 rev2 rev3; do "$assay" user add "$user" --group reviewers --as author >/dev/null; done
"$assay" user add expert --group experts --as author >/dev/null
"$assay" user add auditor --group experts --as author >/dev/null

# 1. the bundled samples, each by its own participant, through the escalation review stage
for sample in good good-split bad-review bad; do
  dir="$essay/submissions/$sample"
  sub=$("$assay" submit reviewed-essay --artifact "essay=$dir/essay.md" \
        --summary "$(cat "$dir/summary.txt")" --as "p-$sample" --json | field "d['submission']")
  echo "$sample $sub" >> "$work/submissions"
  "$py" - "$dir/submission.json" "$sub" > "$work/responses-$sample" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])).get("review", {}).get("responses", []):
    print(r["as"], r["node"], r["verdict"], json.dumps(r["rationale"]))
PY
  while read -r who node verdict rationale; do
    seat=$("$assay" review seats --as "$who" --json |
           field "next(s['seat'] for s in d['open'] if s['node']=='$node' and s['submission']=='$sub')")
    uri=$("$assay" review claim "$seat" --as "$who" --json | field "d['materials'][0]['uri']")
    printf '{"verdict":"%s","rationale":%s,"citations":["%s"],"confidence":0.8,"assistance":[]}' \
      "$verdict" "$rationale" "$uri" > "$work/r.json"
    "$assay" review respond "$seat" --file "$work/r.json" --as "$who" >/dev/null
  done < "$work/responses-$sample"
  echo "$sample: $("$assay" show "$sub" --as "p-$sample" --json | field "d['runs'][-1]['status']")"
done

# 2. an audit campaign: 3 of the problem's finished runs, sampled with seed 7; one expert each
cmp=$("$assay" review campaign create --protocol "$here/single-expert.yaml" \
      --items "runs:problem=reviewed-essay,status=any" --sample 3 --seed 7 --as author --json |
      field "d['campaign']")
for seat in $("$assay" review seats --as auditor --json |
              field "' '.join(s['seat'] for s in d['open'] if s['problem']=='$cmp')"); do
  item=${seat%%/*}
  target=$("$assay" review campaign show "$cmp" --json |
           field "next(i['target'] for i in d['items'] if i['item']=='$item')")
  sample=$(awk -v t="$target" '$2 == t {print $1}' "$work/submissions")
  uri=$("$assay" review claim "$seat" --as auditor --json | field "d['materials'][0]['uri']")
  "$py" - "$here/expert-verdicts.json" "$sample" "$uri" > "$work/r.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))["verdicts"][sys.argv[2]]
print(json.dumps({**v, "citations": [sys.argv[3]], "confidence": 0.9, "assistance": []}))
PY
  "$assay" review respond "$seat" --file "$work/r.json" --as auditor >/dev/null
done
"$assay" review campaign show "$cmp"

# 3. the two protocols compared, from the ledger alone
"$assay" review report --reference "A single expert decides"

# 4. a verifier with two contract versions (the checker-program example, named and revised)
cp -r "$root/examples/problems/checker-program" "$work/colouring"
sed -i 's/^  acceptance: >-/  verifier: graph-colouring\n  acceptance: >-/' "$work/colouring/problem.yaml"
"$assay" problem publish "$work/colouring" --as author >/dev/null
sed -i 's/timeout: 20/timeout: 30/' "$work/colouring/problem.yaml"
"$assay" problem publish "$work/colouring" --as author >/dev/null
"$assay" verifier show graph-colouring
