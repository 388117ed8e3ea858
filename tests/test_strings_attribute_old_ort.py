"""On an ONNX Runtime older than 1.25 (no KernelInfoGetAttributeArray_string), an op that declares a
`strings` attribute is refused at session creation with an error naming the op, the attribute and
the version needed; the process goes on and the next session works. (CI's oldest-ORT run reaches
this; on a newer ORT, tests/test_strings_attribute.py covers the attribute itself.)"""
import numpy as np
import onnxruntime as ort
import pytest

import ortcustom
from ortcustom import Attr, Domain, Input, Op, Output
from ortcustom.testing import make_model
from helpers import CPU

_ORT = tuple(int(x) for x in ort.__version__.split(".")[:2])
pytestmark = pytest.mark.skipif(_ORT >= (1, 25), reason=f"onnxruntime {ort.__version__} reads strings attributes")


def test_a_strings_attribute_on_an_older_runtime_names_the_version_needed():
    words = Op("Words", [Input("X", "float")], [Output("Y", "float", shape="X")],
               attrs=[Attr("words", "strings", default=("a", "b"))], compute=lambda X, words: X + len(words))
    plain = Op("Plain", [Input("X", "float")], [Output("Y", "float", shape="X")], compute=lambda X: X + 1)
    d = Domain("oldort.strings").add(words, plain)
    x = np.zeros((2,), np.float32)
    with pytest.raises(Exception, match=r"Words.*attribute 'words' \(strings\) needs ONNX Runtime 1.25 or newer "
                                        rf"to be read; this one is {ort.__version__}"):
        ort.InferenceSession(make_model(words, d, {"X": x}).SerializeToString(), ortcustom.session_options(d),
                             providers=CPU)
    sess = ort.InferenceSession(make_model(plain, d, {"X": x}).SerializeToString(), ortcustom.session_options(d),
                                providers=CPU)
    np.testing.assert_array_equal(sess.run(None, {"X": x})[0], x + 1)
