"""The bundled reference training stack: the only package of trl-migrate that imports torch.

`loss` (bf16 chunked NLL), `tiny` (offline tiny models, tokenizer, data) and `train` (the
environment smoke check behind `trl-migrate smoke --env`). Import the submodules directly.
"""
