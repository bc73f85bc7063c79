#!/bin/sh
# An sslbench CI job for a firmware pipeline: after the build is flashed onto the lab's boards, benchmark them,
# fail the pipeline on a significant regression, publish the site. POSIX sh; GitLab, Jenkins and GitHub Actions
# run it as a step and read the JUnit files it leaves (see docs/ci.md).
#
#   INVENTORY   the lab's Ansible inventory                      (default: lab.yml)
#   HOSTS       the boards to judge, separated by spaces         (default: every host in the latest run)
#   PCT         fail on a significant drop of more than PCT %    (default: 5)
#   RESULTS     the result store, kept between pipeline runs     (default: results)
#   SITE        where the static site goes                       (default: public)
#   SSLBENCH    the command                                      (default: sslbench)
#   SKIP_RUN=1  judge and publish the store as it is, without benchmarking
#
# Exit code: 0 fine, 3 a regression (a JUnit file says which cell), anything else: sslbench's own error.
set -u
INVENTORY=${INVENTORY:-lab.yml}
PCT=${PCT:-5}
RESULTS=${RESULTS:-results}
SITE=${SITE:-public}
SSLBENCH=${SSLBENCH:-sslbench}

if [ "${SKIP_RUN:-0}" != 1 ]; then
    # --repeat 5: every sample stored, >= 4 per side for a Mann-Whitney verdict. The firmware identity of each
    # board (release, revision, kernel, OpenSSL build) is read from the board itself. Exit 1 = some board failed.
    $SSLBENCH run -i "$INVENTORY" --repeat 5 --results "$RESULTS" || [ $? -eq 1 ] || exit 2
fi
if [ -z "${HOSTS:-}" ]; then
    HOSTS=$($SSLBENCH report --results "$RESULTS" --format json |
            python3 -c 'import json, sys; print(" ".join(sorted({r["host"] for r in json.load(sys.stdin)})))') || exit 2
fi

status=0
mkdir -p junit
for host in $HOSTS; do
    # The newest firmware step of every cell, and the newest run against its firmware's history.
    $SSLBENCH trend "$host" --results "$RESULTS" --fail-on-regression "$PCT" --format junit -o "junit/sslbench-$host.xml"
    code=$?
    case $code in
        0) ;;
        3) status=3 ;;
        *) echo "sslbench trend $host failed (exit $code)" >&2; [ $status -eq 3 ] || status=$code ;;
    esac
done
$SSLBENCH publish "$RESULTS" -o "$SITE" || exit 2
exit $status
