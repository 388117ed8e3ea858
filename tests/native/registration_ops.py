"""Declarations of the plain libraries the registration tests build (kernels:
registration_kernels.cpp): each list below is one library's domains."""
from ortcustom import Domain, Input, Op, Output
from ortcustom.types import ELEMENT_TYPES

ANY = tuple(ELEMENT_TYPES)  # every element type: Pick has len(ANY) ** 4 type bindings


def scale(kernel, name="Scale", **versions):
    return Op(name, [Input("X", "float")], [Output("Y", "float", shape="X")], native=f"registration_ops:{kernel}",
              **versions)


OLD = scale("scale2", until=4)   # opsets 1..4: Y = 2 X
NEW = scale("scale3", since=5)   # opsets 5..: Y = 3 X
PICK = Op("Pick", [Input(n, f"T{n}") for n in "ABCD"], [Output("Y", "float")],
          types={f"T{n}": ANY for n in "ABCD"}, native="registration_ops:pick")

VERSIONS = [Domain("test.versions").add(OLD, NEW)]      # two versions of one op
UNTIL = [Domain("test.until").add(scale("scale2", until=4))]  # one op with an end
MAIN = [Domain("test.scale").add(scale("scale2")), Domain("test.any4").add(PICK)]
OTHER = [Domain("test.scale").add(scale("scale3", name="Triple"))]  # test.scale again, other ops

# op names that are no identifiers, one kernel each (ONNX takes any text as an op_type)
ODD_NAMES = ("String-Split", "my.op", 'say "hi"\\? \u00f6 \U0001f600')
NAMES = [Domain("test.names").add(*(scale(k, name=n) for k, n in zip(("scale2", "scale3", "scale2"), ODD_NAMES)))]

# a heterogeneous variadic input: each tensor any of T's types, independently
MIXED = ("float", "int64", "double")
DTYPES = Op("Dtypes", [Input("xs", "T", variadic=True, homogeneous=False)], [Output("Y", "float")],
            types={"T": MIXED}, native="registration_ops:dtypes")
HETEROGENEOUS = [Domain("test.heterogeneous").add(DTYPES)]

# a heterogeneous variadic output: each tensor any of T's types, the node's (ys[j] = X + j in it)
SPLAT = Op("Splat", [Input("X", "float")], [Output("ys", "T", shape="X", variadic=True, homogeneous=False)],
           types={"T": MIXED}, native="registration_ops:splat")
HETEROGENEOUS_OUT = [Domain("test.heterogeneous_out").add(SPLAT)]
