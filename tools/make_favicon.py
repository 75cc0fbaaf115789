"""Write book/_site/root/favicon.ico: the site's icon (book/_site/favicon.svg) as a 32 x 32 PNG
inside an ICO file, for the one page that cannot name an icon (the root redirect page that
Jupyter Book writes), so that a browser's request for /favicon.ico finds a file.

    python tools/make_favicon.py
"""

from __future__ import annotations

import io
import struct
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "book" / "_site" / "root" / "favicon.ico"


def icon_png(size: int = 32) -> bytes:
    """The icon drawn as in favicon.svg: a white bell curve on a rounded blue square."""
    fig = plt.figure(figsize=(1, 1), dpi=size)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 32)
    ax.set_ylim(32, 0)
    ax.axis("off")
    ax.add_patch(
        FancyBboxPatch((0, 0), 32, 32, boxstyle="round,pad=0,rounding_size=6", color="#2b5d8a")
    )
    t = np.linspace(3, 29, 200)
    ax.plot(
        t,
        25 - 18 * np.exp(-((t - 16) ** 2) / 18),
        color="white",
        linewidth=3 * size / 72,
        solid_capstyle="round",
    )
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=size, transparent=True)
    plt.close(fig)
    return buffer.getvalue()


def ico(png: bytes, size: int = 32) -> bytes:
    """An ICO file holding one PNG image (allowed since Windows Vista; every browser reads it)."""
    header = struct.pack("<HHH", 0, 1, 1)
    entry = struct.pack("<BBBBHHII", size, size, 0, 0, 1, 32, len(png), 6 + 16)
    return header + entry + png


if __name__ == "__main__":
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(ico(icon_png()))
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")
