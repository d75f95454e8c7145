"""Type stub of ``gradstack_tensor._op_table`` (imported for its side effect).

Importing it declares the built-in ops.
"""
