"""Declarations of one op name several times, one per type signature (kernels:
sibling_kernels.cpp). `measure(k)`/`route(k)` take how each kernel is named: "sibling_ops:<name>"
in the plain library (SIBLINGS), a loaded NativeKernel in a Python session."""
from ortcustom import Domain, Input, Op, Output


def measure(k):
    return (Op("Measure", [Input("X", "float")], [Output("Y", "float", shape="X")], native=k("twice")),
            Op("Measure", [Input("X", "int64")], [Output("Y", "int64", shape="X")], native=k("negate")),
            Op("Measure", [Input("X", "string")], [Output("Y", "int64", shape="X")], native=k("byte_len")))


def route(k):
    return (Op("Route", [Input("X", "T"), Input("K", "I")], [Output("Y", "T", shape="X")],
               types={"T": ["float", "double"], "I": ["int32", "int16"]}, native=k("route_a")),
            Op("Route", [Input("X", "T"), Input("K", "int64")], [Output("Y", "T", shape="X")],
               types={"T": ["float", "double"]}, native=k("route_b")))


def _library(name):
    return f"sibling_ops:{name}"


MEASURE = measure(_library)
ROUTE = route(_library)
SIBLINGS = [Domain("test.siblings").add(*MEASURE, *ROUTE)]
