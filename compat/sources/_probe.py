"""Lists an interpreter's distributions as JSON. Standard library only, Python 3.8 syntax:
it runs inside the interpreter being checked (`python -c <this source>`), or is imported."""

import json
import sys


def probe(path=None):
    """Every distribution on `path` (default: sys.path without the current folder)."""
    import os
    from importlib import metadata

    if path is None:
        here = os.getcwd()
        path = [p for p in sys.path if p and os.path.abspath(p) != here]
    dists = []
    for dist in metadata.distributions(path=path):
        path = getattr(dist, "_path", None)
        name = version = None
        problem = ""
        try:
            meta = dist.metadata
            name = meta["Name"] if meta is not None else None
            version = meta["Version"] if meta is not None else None
        except Exception as e:  # noqa: BLE001 - a broken dist-info must not stop the listing
            problem = f"{type(e).__name__}: {e}"
        dists.append(
            {"name": name, "version": version, "path": str(path or ""), "problem": problem}
        )
    return {
        "python": "{}.{}.{}".format(*sys.version_info[:3]),
        "executable": sys.executable,
        "dists": dists,
    }


BF16 = """
import json, platform
import torch
device = "cuda" if torch.cuda.is_available() else "cpu"
name = torch.cuda.get_device_name(0) if device == "cuda" else platform.machine()
out = {"device": device, "name": name}
try:
    x = torch.ones(8, 8, dtype=torch.bfloat16, device=device)
    ok = float((x @ x).float().sum().item()) == 512.0
    if device == "cuda":
        ok = ok and bool(torch.cuda.is_bf16_supported())
    out["bf16"] = ok
except Exception as e:
    out["bf16"] = False
    out["error"] = "{}: {}".format(type(e).__name__, e)
print(json.dumps(out))
"""


if __name__ == "__main__":
    print(json.dumps(probe()))
