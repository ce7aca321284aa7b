import os


def helper():
    return 1


raise RuntimeError("planted: this kernel file does not import")
