"""The timing model of the HLS C kernels (tests/hls_timing.py)."""
