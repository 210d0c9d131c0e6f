#!/usr/bin/env python3
"""Validates ATIF documents (one per line) with the two validators users have: the `atif`
package from PyPI and Harbor's own Pydantic trajectory models (`harbor.models.trajectories`,
from the directory given in HARBOR_PATH, where `.ci/run` unpacks the harbor wheel: harbor
needs Python 3.12 to install, but its trajectory models import with pydantic alone).

usage: atif_check.py FILE...   prints "N documents valid under atif X and harbor Y" or fails.
"""

import json
import os
import sys
from importlib.metadata import version

import atif

sys.path.insert(0, os.environ["HARBOR_PATH"])
from harbor.models.trajectories import Trajectory as HarborTrajectory  # noqa: E402

documents = 0
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            document = json.loads(line)
            for name, model in (("atif", atif.Trajectory), ("harbor", HarborTrajectory)):
                try:
                    model.model_validate(document)
                except Exception as e:  # pydantic.ValidationError, with every problem listed
                    sys.exit(f"{path}:{number}: session {document.get('session_id')}: {name} rejects it:\n{e}")
            documents += 1
if documents == 0:
    sys.exit("no documents")
harbor_version = "unknown"
for entry in os.listdir(os.environ["HARBOR_PATH"]):
    if entry.startswith("harbor-") and entry.endswith(".dist-info"):
        harbor_version = entry[len("harbor-"):-len(".dist-info")]
print(f"{documents} documents valid under atif {version('atif')} and harbor {harbor_version}")
