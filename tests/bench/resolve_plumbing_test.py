"""The Python harnesses' side of `tunekit resolve`, without a GPU: what
bench/kernels/common.py makes of resolve's JSON for a CuPy launch, that
every benchmark and probe still finds what it imports and calls, and that
the probes' hooks (lab/probes/hooks) still fit the sources they patch.

  TUNEKIT=build/bin/tunekit python3 -m unittest -v resolve_plumbing_test   (from tests/bench)

The CUDA specs are resolved with an H200's properties from tests/cli/data,
so no GPU is needed; torch, CuPy and numpy are not imported.
"""
import ast
import glob
import importlib
import os
import shutil
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "lab", "probes"))
sys.path.insert(0, os.path.join(ROOT, "bench", "kernels"))
import common  # noqa: E402

H200 = os.path.join(ROOT, "tests", "cli", "data", "h200.json")
TUNEKIT = os.environ.get("TUNEKIT") or os.path.join(ROOT, "build", "bin", "tunekit")


def spec(*parts):
    return os.path.join(ROOT, "kernels", *parts)


def resolve(path, size=None, config=None, **kw):
    return common.resolve(path, size, config, tunekit=TUNEKIT, properties=H200, **kw)


class LaunchPlan(unittest.TestCase):
    def test_flash_decoding_in_a_cluster(self):
        cfg = dict(SPLIT=8, WARPS=8, KPW=16, SMEM=1, STAGES=2, SCHED=0, BPS=1, COMBINE=0, PREFETCH=256, CLUSTER=1)
        r = resolve(spec("flash_decode", "flash_decode.yaml"), dict(B=1, Hq=4, Hkv=1, L=2048), cfg)
        plan = common.launch_plan(r)
        self.assertEqual(plan["source"], spec("flash_decode", "flash_decode.cu"))
        self.assertEqual(plan["entry"], "flash_decode")
        self.assertEqual(plan["flags"], [])
        self.assertEqual(plan["defines"], [f"{k}={v}" for k, v in cfg.items()])
        self.assertEqual(plan["grid"], (8, 1, 1))
        self.assertEqual(plan["block"], (256, 1, 1))
        self.assertEqual(plan["cluster"], (8, 1, 1))
        self.assertEqual(plan["smem"], 138624)  # the spec's formula, worked by hand in tests/cli/resolve_cli_test.cpp
        by_name = {a["name"]: a for a in plan["arguments"]}
        self.assertEqual(by_name["workspace"]["count"], 4 * 8 * 130)  # scratch: allocated zeroed by SpecLaunch
        self.assertEqual(by_name["counters"]["type"], "u32")
        self.assertEqual((by_name["L"]["role"], by_name["L"]["value"]), ("scalar", 2048))

    def test_tensor_maps(self):
        r = resolve(spec("gemm", "wgmma_swap.yaml"), dict(M=16, K=4096, N=4096, B_NK=1),
                    dict(BN=64, STAGES=8, KSUB=2, SPLIT_K=1, EVICT=1))
        plan = common.launch_plan(r)
        self.assertEqual(plan["flags"], ["-DSWAP_AB=1"])
        self.assertIn("BM=16", plan["defines"])  # pinned to M by a constraint
        self.assertEqual(plan["grid"], (64, 1, 1))
        tmap = next(a for a in plan["arguments"] if a["name"] == "tmap_b")
        self.assertEqual(tmap["role"], "tensor_map")
        self.assertEqual(tmap["type"], "bf16")
        self.assertEqual(tmap["tensor_map"]["dims"], [4096, 4096])
        self.assertEqual(tmap["tensor_map"]["box"], [64, 64])
        # the driver's enums, as common.TensorMap encodes them
        self.assertEqual(common.SWIZZLES[tmap["tensor_map"]["swizzle"]], 3)
        self.assertEqual(common.L2_PROMOTIONS[tmap["tensor_map"]["l2_promotion"]], 2)
        self.assertEqual(common.TensorMap.DATA_TYPES[tmap["type"]], 9)

    def test_scalars_keep_their_type(self):
        r = resolve(spec("decode_attention", "softmax.yaml"), {"rows": 4, "n": 2048}, {"THREADS": 128})
        plan = common.launch_plan(r)
        self.assertEqual((plan["grid"], plan["block"]), ((4, 1, 1), (128, 1, 1)))
        scale = next(a for a in plan["arguments"] if a["name"] == "scale")
        self.assertEqual(common.SCALAR_TYPES[scale["type"]], "float32")
        self.assertAlmostEqual(scale["value"], 1 / 128 ** 0.5, places=12)
        self.assertEqual(common.CTYPES[common.SCALAR_TYPES[scale["type"]]], "c_float")
        rows = next(a for a in plan["arguments"] if a["name"] == "rows")
        self.assertEqual((common.SCALAR_TYPES[rows["type"]], rows["value"]), ("int32", 4))

    def test_a_pinned_parameter_left_out_is_computed_for_the_size(self):
        # what decode_attention.py's uniform configs rely on, and gemm.py's check of the policy header
        cfg = dict(BM=16, BN=32, BK=128, WM=16, WN=32, STAGES=4, SPLIT_K=1, GROUP_M=1)
        for b_nk, k, n, path in ((1, 128, 2048, 1), (0, 2048, 128, 3), (0, 2048, 7, 4), (1, 13, 7, 2)):
            r = resolve(spec("gemm", "gemm_mma.yaml"), dict(M=4, K=k, N=n, B_NK=b_nk), cfg, ignore_constraints=True)
            self.assertEqual(r["config"]["PATH"], path, (b_nk, k, n))
            self.assertEqual(r["config_origin"]["PATH"], "pinned")

    def test_a_config_outside_the_space(self):
        path = spec("gemm", "wgmma_swap.yaml")
        with self.assertRaises(common.ResolveError) as e:
            resolve(path, config=dict(SPLIT_K=1, KSUB=8))
        self.assertIn("shared_memory_per_block_optin' does not hold", str(e.exception))
        r = resolve(path, config=dict(SPLIT_K=1, KSUB=8), ignore_constraints=True)
        self.assertFalse(r["valid"])
        self.assertIn("shared_memory_per_block_optin", r["invalid_reason"])
        with self.assertRaises(common.ResolveError) as e:
            resolve(path, config=dict(BNN=64))
        self.assertIn("did you mean 'BN'?", str(e.exception))

    def test_resolutions_are_remembered(self):
        path = spec("gemm", "gemm_gemv.yaml")
        size = dict(M=1, K=4096, N=4096, B_NK=1)
        first = resolve(path, size, ignore_constraints=True)  # the spec has no default: each first value
        self.assertIs(resolve(path, size, ignore_constraints=True), first)
        self.assertEqual(common.spec_name(path, tunekit=TUNEKIT, properties=H200), "gemm_gemv")


class GpuProperties(unittest.TestCase):
    """SpecLaunch resolves with the GPU's properties saved once from `tunekit
    devices --json`, so that each resolution does not initialise the driver."""

    def fake_tunekit(self, devices_json):
        import tempfile
        d = tempfile.mkdtemp()
        path = os.path.join(d, "tunekit")
        with open(os.path.join(d, "devices.json"), "w") as f:
            f.write(devices_json)
        with open(path, "w") as f:
            f.write(f'#!/bin/sh\n[ "$1 $2" = "devices --json" ] && exec cat {d}/devices.json\nexit 9\n')
        os.chmod(path, 0o755)
        return path

    def setUp(self):
        common._gpu_properties.clear()

    def tearDown(self):
        common._gpu_properties.clear()

    def test_the_first_cuda_device_is_saved_once(self):
        import json
        h200 = {"device": "cuda: NVIDIA H200", "sm_count": 132}
        tk = self.fake_tunekit(json.dumps({"backends": [
            {"backend": "cpu", "devices": [{"device": "cpu", "cores": 2}], "unavailable": ""},
            {"backend": "cuda", "devices": [h200, {"device": "cuda: another"}], "unavailable": ""}]}))
        path = common.gpu_properties_file(tk)
        with open(path) as f:
            self.assertEqual(json.load(f), h200)
        os.remove(path)
        self.assertEqual(common.gpu_properties_file(tk), path)  # remembered, not asked again
        # and the file is what `tunekit resolve --properties` reads
        with open(H200) as f:
            saved = dict(json.load(f), device="cuda: a saved H200")
        with open(path, "w") as f:
            json.dump(saved, f)
        r = common.resolve(spec("decode_attention", "softmax.yaml"), tunekit=TUNEKIT, properties=path)
        self.assertEqual(r["device"], "cuda: a saved H200")
        os.remove(path)

    def test_no_cuda_device_means_none(self):
        import json
        tk = self.fake_tunekit(json.dumps({"backends": [
            {"backend": "cuda", "devices": [], "unavailable": "no CUDA driver"}]}))
        self.assertIsNone(common.gpu_properties_file(tk))


class Hooks(unittest.TestCase):
    """The probes' switches that kernels/ and bench/ ship without are patches
    in lab/probes/hooks, applied to a copy when a probe runs (on the GPU
    machine only): an edit of a kernel that a patch no longer fits shows here."""

    PATCHES = sorted(glob.glob(os.path.join(ROOT, "lab", "probes", "hooks", "*.patch")))

    def test_every_hook_fits_the_source_it_patches(self):
        import lab_common
        self.assertGreaterEqual(len(self.PATCHES), 3)
        for patch in self.PATCHES:
            files = lab_common.read_patch(patch)
            self.assertTrue(files, patch)
            for path, hunks in files.items():
                with open(os.path.join(ROOT, path)) as f:
                    text = f.read()
                with self.subTest(patch=os.path.basename(patch), path=path):
                    self.assertNotEqual(lab_common.apply_hunks(text, hunks, path), text)
            if shutil.which("git") and os.path.exists(os.path.join(ROOT, ".git")):
                p = subprocess.run(["git", "apply", "--check", patch], cwd=ROOT, capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, f"{os.path.basename(patch)}: {p.stderr}")

    def test_a_hooked_copy_resolves_to_its_own_source(self):
        import lab_common
        hooked = lab_common.hooked_kernel_dir(spec("gemm"), "wgmma_skip.patch", {"WG_SKIP": 7})
        r = resolve(os.path.join(hooked, "wgmma_swap.yaml"), dict(M=16, K=4096, N=4096, B_NK=1),
                    dict(BN=64, STAGES=8, KSUB=2, SPLIT_K=1, EVICT=1))
        plan = common.launch_plan(r)
        self.assertEqual(plan["source"], os.path.join(hooked, "wgmma_gemm.cu"))
        self.assertEqual(plan["defines"], common.launch_plan(resolve(
            spec("gemm", "wgmma_swap.yaml"), dict(M=16, K=4096, N=4096, B_NK=1),
            dict(BN=64, STAGES=8, KSUB=2, SPLIT_K=1, EVICT=1)))["defines"])
        with open(plan["source"]) as f:
            text = f.read()
        self.assertTrue(text.startswith("#define WG_SKIP 7\n"))
        self.assertIn("probe_time(0)", text)
        self.assertIn("STAMP(1)", lab_common.STREAM_SRC)  # the lab's stream source, stamped

    def test_every_hook_a_probe_names_exists(self):
        named = set()
        for path in glob.glob(os.path.join(ROOT, "lab", "probes", "*.py")):
            with open(path) as f:
                for node in ast.walk(ast.parse(f.read(), path)):
                    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith(".patch"):
                        named.add(node.value)
        self.assertTrue(named)
        hooks = os.path.join(ROOT, "lab", "probes", "hooks")
        self.assertEqual(sorted(n for n in named if not os.path.exists(os.path.join(hooks, n))), [])


def on_bench_triton(path):
    """Whether a script's `common` is bench/triton/common.py (another module
    than bench/kernels'): the Triton benchmarks, and the probes built on them."""
    with open(path) as f:
        return os.path.dirname(path) == os.path.join(ROOT, "bench", "triton") or '"bench", "triton"' in f.read()


class Harnesses(unittest.TestCase):
    """Each benchmark and probe imports, and every name it takes from common
    or lab_common exists there: they only run on the GPU machine, so this is
    what catches a name that moved."""

    ALL = sorted(glob.glob(os.path.join(ROOT, "bench", "kernels", "*.py")) +
                 glob.glob(os.path.join(ROOT, "bench", "gpu", "*.py")) +
                 glob.glob(os.path.join(ROOT, "bench", "triton", "*.py")) +
                 glob.glob(os.path.join(ROOT, "lab", "probes", "*.py")))
    SCRIPTS = [p for p in ALL if not on_bench_triton(p)]
    TRITON_SCRIPTS = [p for p in ALL if on_bench_triton(p)]

    def assert_names_exist(self, path, modules):
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in modules and os.path.basename(path) != node.value.id + ".py":
                self.assertTrue(hasattr(modules[node.value.id], node.attr),
                                f"{os.path.relpath(path, ROOT)}:{node.lineno}: {node.value.id}.{node.attr}")

    def import_script(self, path):
        name = os.path.splitext(os.path.basename(path))[0]
        sys.path.insert(0, os.path.dirname(path))
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name not in ("numpy", "torch", "cupy", "triton"):  # imported at the top by a few probes
                raise
        finally:
            sys.path.pop(0)

    def test_every_script_compiles(self):
        self.assertGreater(len(self.SCRIPTS), 15)
        for path in self.ALL:
            with open(path) as f:
                compile(f.read(), path, "exec")

    def test_every_name_taken_from_the_shared_modules_exists(self):
        import lab_common
        for path in self.SCRIPTS:
            self.assert_names_exist(path, {"common": common, "lab_common": lab_common})

    def test_every_script_imports(self):
        for path in self.SCRIPTS:
            self.import_script(path)

    def test_the_scripts_on_bench_triton_import_and_find_their_names(self):
        self.assertIn(os.path.join(ROOT, "lab", "probes", "moe_config_cost_probe.py"), self.TRITON_SCRIPTS)
        modules, path = dict(sys.modules), list(sys.path)
        try:
            del sys.modules["common"]  # bench/kernels' is imported above
            sys.path.insert(0, os.path.join(ROOT, "bench", "triton"))
            import common as triton_common
            for script in self.TRITON_SCRIPTS:
                self.assert_names_exist(script, {"common": triton_common})
                self.import_script(script)
        finally:
            for name in [n for n in sys.modules if n not in modules]:
                del sys.modules[name]
            sys.modules.update(modules)
            sys.path[:] = path


if __name__ == "__main__":
    unittest.main()
