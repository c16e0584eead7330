#!/usr/bin/env bash
# Install dlib face detection/recognition (finegrain.album.engine.profile.faces) into .venv
# WITHOUT compiling dlib: `pip install face-recognition` requires the `dlib` source
# package, which builds with CMake for many minutes (and fails without a compiler).
# Order: the prebuilt wheel dlib-bin (provides the `dlib` module) and the model files
# first, then face-recognition with --no-deps so pip does not pull `dlib`.
# setuptools<81: face-recognition-models imports pkg_resources.
# Usage: bash scripts/install-faces.sh [PYTHON]    (default .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
py=${1:-.venv/bin/python}
pip=("$py" -m pip install -q --disable-pip-version-check)
lock=()
command -v flock >/dev/null && lock=(flock /tmp/pip.lock)
"${lock[@]}" "${pip[@]}" "setuptools<81" "dlib-bin>=19.24" "face-recognition-models>=0.3" "Pillow>=10" "Click>=6" numpy
"${lock[@]}" "${pip[@]}" --no-deps "face-recognition>=1.3"
"$py" - <<'PY'
import warnings
warnings.simplefilter("ignore")
import dlib, face_recognition, numpy as np
img = np.zeros((64, 64, 3), dtype=np.uint8)
assert face_recognition.face_locations(img) == []
print(f"faces ready: dlib {dlib.__version__}, face_recognition {face_recognition.__version__}")
PY
