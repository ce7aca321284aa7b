# A fake Triton kernel for the protocol tests (tunekit_triton.fake): the
# entry's signature stands for a @triton.jit one, behaviour() says what each
# config does.


def fake_kernel(x, out, n, BLOCK: "tl.constexpr", MODE: "tl.constexpr"):
    pass


def behaviour(config):
    mode = config.get("MODE", 0)
    b = {"time_us": 64.0 / config["BLOCK"], "shared_memory": config["BLOCK"] * 1024}
    b.update({0: {}, 1: {"compile": "error: planted compile error"}, 2: {"run": "launch_error"},
              3: {"run": "crash"}, 4: {"run": "hang"}, 5: {"run": "wrong"}, 6: {"run": "sticky"},
              7: {"registers": 255}, 8: {"run": "wrong_later"}, 9: {"run": "once"}}[mode])
    return b


def unwriting_reference():  # the fake runner's reference writes what this returns
    return float("nan")
