"""tunekit_triton.kernel: finding the @triton.jit entry of a kernel file,
with stand-ins of Triton's classes (no triton here)."""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from tunekit_triton import kernel as kernel_mod  # noqa: E402

# Triton's JITFunction and the decorators over it, as far as tunekit looks:
# their class names and attributes (triton/runtime/jit.py, autotuner.py).
STAND_INS = '''
class JITFunction:
    def __init__(self, fn):
        self.fn, self.arg_names = fn, list(fn.__code__.co_varnames[:fn.__code__.co_argcount])
    def run(self, *args, **kwargs):
        pass

class Autotuner:
    def __init__(self, fn):
        self.fn, self.arg_names = fn, fn.arg_names
    def run(self, *args, **kwargs):
        pass

class Heuristics(Autotuner):
    pass

def jit(fn):
    return JITFunction(fn)

'''


class FindEntry(unittest.TestCase):
    def module(self, body):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "k.py")
        with open(path, "w") as f:
            f.write(STAND_INS + body)
        return kernel_mod.load_module(path), path

    def test_a_jit_function_is_the_entry(self):
        m, path = self.module("@jit\ndef add(x, out, n, BLOCK: 'tl.constexpr'):\n    pass\n")
        fn = kernel_mod.find_entry(m, "add", path)
        self.assertEqual(kernel_mod.signature_of(fn).constexprs, ["BLOCK"])

    def test_an_autotuned_entry_is_refused_saying_what_to_point_at(self):
        # Launched through the autotuner, each trial would run the config the
        # autotuner picks; its signature (*args, **kwargs) would make every
        # parameter and argument of the spec look unknown.
        m, path = self.module("@Autotuner\n@jit\ndef add(x, out, n, BLOCK: 'tl.constexpr'):\n    pass\n"
                              "\n@Autotuner\n@Heuristics\n@jit\ndef add2(x, BLOCK: 'tl.constexpr'):\n    pass\n")
        with self.assertRaises(kernel_mod.KernelLoadError) as e:
            kernel_mod.find_entry(m, "add", path)
        self.assertEqual(e.exception.kind, "entry")  # located at the spec's kernel.entry
        line = STAND_INS.count("\n") + 1
        self.assertIn(f"'add' in k.py (line {line}) is wrapped in @triton.autotune: expected a @triton.jit function",
                      str(e.exception))
        self.assertIn("'add = triton.autotune(...)(add_jit)'", str(e.exception))
        with self.assertRaises(kernel_mod.KernelLoadError) as e:
            kernel_mod.find_entry(m, "add2", path)
        self.assertIn("is wrapped in @triton.autotune and @triton.heuristics", str(e.exception))


if __name__ == "__main__":
    unittest.main()
