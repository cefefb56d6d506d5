# ===- plotting.py - matplotlib for the tuning scripts, where it is installed -------------------------=== #
import sys


def pyplot(tool):
    """matplotlib.pyplot drawing to files only, or None (said on stderr, naming `tool`) without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("%s: no matplotlib; the plots are skipped (pip install matplotlib)" % tool, file=sys.stderr)
        return None
    return plt
