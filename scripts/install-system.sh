#!/usr/bin/env bash
# System packages the tests need: Chromium for the browser tests, PostgreSQL for the database tests, and
# the build tools of confseq.
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need+=(postgresql)
# confseq, built from source for tests/test_confseq.py (requirements-nodeps.txt): a C++ compiler, Boost's
# headers, and the headers of the Python the virtual environment is made from
command -v g++ >/dev/null 2>&1 || need+=(g++)
[ -e /usr/include/boost/version.hpp ] || need+=(libboost-dev)
"${PYTHON:-python3}" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null || need+=(python3-dev)
[ ${#need[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
