"""Type stub of ``gradstack_tensor._elementwise`` (imported for its side effect).

Importing it binds the C kernels of the elementwise ops.
"""

def take_byproduct(input: object, output: object) -> object: ...
def _set_byproduct_wanted(wanted: bool) -> None: ...
