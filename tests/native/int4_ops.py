"""Declarations of the 4-bit integer ops of tests/test_int4.py (kernels: int4_kernels.cpp), for its
plain library."""
from ortcustom import Attr, Domain, Input, Op, Output

FOUR = ("int4", "uint4")
NEG4 = Op("Neg4", [Input("X", "T")], [Output("Y", "T", shape="X")], types={"T": FOUR + ("float",)},
          native="int4_ops:neg4")
UNPACK4 = Op("Unpack4", [Input("X", "T")], [Output("Y", "int64", shape="X")], types={"T": FOUR},
             native="int4_ops:unpack4")
ATTR4 = Op("Attr4", [Input("X", "float")], [Output("Y", "int64")], attrs=[Attr("t", "tensor")], native="int4_ops:attr4")
INT4 = [Domain("test.int4").add(NEG4, UNPACK4, ATTR4)]
