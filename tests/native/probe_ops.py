"""Declarations of tests/native/probe_kernels.cpp's kernels (tests/test_glue_hands_kernels.py), as a
package declares its ops: `domain` for `python -m ortcustom library-source`, `ops(kernels)` with
the kernels of a loaded library for the Python path."""
from ortcustom import Attr, Domain, Input, Op, Output

NON_ASCII = "é→ü"  # 3 characters, 7 UTF-8 bytes


def ops(kernels=None):
    """{name: Op}; `kernels`: a KernelLibrary (None: kernels named for a plain library's table)."""
    k = (lambda n: kernels[n]) if kernels is not None else (lambda n: "probe:" + n)
    x = [Input("X", "float")]
    return {
        "TwoOutputs": Op("TwoOutputs", x, [Output("A", "float", shape="X"), Output("B", "float")],
                         native=k("two_outputs")),
        "EchoFloat": Op("EchoFloat", x, [Output("Y", "double")], attrs=[Attr("f", "float", 0.1)],
                        native=k("echo_float")),
        "EchoRequired": Op("EchoRequired", x, [Output("Y", "double")], attrs=[Attr("f", "float")],
                           native=k("echo_float")),
        "EchoString": Op("EchoString", x, [Output("Y", "uint8")], attrs=[Attr("s", "string", NON_ASCII)],
                         native=k("echo_string")),
    }


domain = Domain("test.probe").add(*ops().values())
