"""The answers the worked solutions give, as a reader would type them into the answer cells.

For every checker of every chapter (keyed by the chapter and the checker's name): ``fill``, the
line(s) that replace the answer cell's ``... = None`` line, and ``shown``, where the chapter's
folded solution gives that answer. A ``{glue:text}`name:spec``` role in ``fill`` is written out
from the chapter's stored run exactly as the page shows it (so the reader's number has the
digits the solution prints, no more); tests/test_exercise_notebooks.py checks that every such
role, and every ``shown`` passage, is in that exercise's solution, then that the checker calls
the filled answer right.
"""

from __future__ import annotations

G = "{glue:text}"


def g(name: str, spec: str = "") -> str:
    """A glue role as the chapters write it."""
    return f"{G}`{name}:{spec}`" if spec else f"{G}`{name}`"


def column(*names: str, spec: str) -> str:
    """A column of glued numbers, as a nested list (an n x 1 array)."""
    return "[" + ", ".join(f"[{g(n, spec)}]" for n in names) + "]"


def row(*names: str, spec: str) -> str:
    return "[" + ", ".join(g(n, spec) for n in names) + "]"


RMS_BACKWARD = """import numpy as np


def backward(x, d, epsilon):
    r = np.sqrt((x * x).mean(axis=1, keepdims=True) + epsilon)
    y = x / r
    return (d - y * (d * y).mean(axis=1, keepdims=True)) / r


answer = backward"""

ANSWERS: dict[str, dict[str, dict[str, object]]] = {
    "01-moving-target": {
        "check_bias_free_ratio": {"fill": "answer = 10", "shown": ["Exactly ten"]},
        "check_floor_deviation": {"fill": f"answer = {g('ch01_ex2', '.4f')}", "shown": []},
        "check_wide_batch_mean": {"fill": f"answer = {g('ch01_ex3_wide', '.3f')}", "shown": []},
    },
    "02-worked-column": {
        "check_gap_below_five_thirds": {
            "fill": f"answer = {g('ch02_ex1_gap', '.2e')}",
            "shown": [],
        },
        "check_running_after_three": {
            "fill": f"mean = {row('ch02_ex2_m1', 'ch02_ex2_m2', spec='.3f')}\n"
            f"variance = {row('ch02_ex2_v1', 'ch02_ex2_v2', spec='.3f')}",
            "shown": [],
        },
        "check_steps_keras": {"fill": f"answer = {g('ch02_ex3_steps')}", "shown": []},
        "check_pytorch_running_var": {
            "fill": f"answer = {g('ch02_ex4', '.1f')}",
            "shown": [],
        },
    },
    "03-backward": {
        "check_grad_input": {
            "fill": f"answer = {column('ch3_ex1_a', 'ch3_ex1_b', 'ch3_ex1_c', spec='.4f')}",
            "shown": [],
        },
        "check_naive_sum": {"fill": "answer = 0", "shown": ["which sums to zero"]},
        "check_constant_grad": {
            "fill": "answer = [[0, 0], [0, 0], [0, 0]]",
            "shown": ["Zero everywhere."],
        },
        "check_float32_floor": {"fill": f"answer = {g('ch3_ex3_factor', '.1e')}", "shown": []},
        "check_backwards_cells": {
            "fill": "answer = [[True, True], [False, True], [False, False], [True, False]]",
            "shown": ["reversed cells are rows 1 and 4 of the first column and rows 1 and 2 of"],
        },
        "check_unbiased": {
            "fill": f"answer = {column('ch3_ex6_a', 'ch3_ex6_b', 'ch3_ex6_c', spec='.4f')}",
            "shown": [],
        },
        "check_rms_backward_function": {
            "fill": RMS_BACKWARD,
            "shown": [
                "r = np.sqrt((x * x).mean(axis=1, keepdims=True) + eps)",
                "y = x / r",
                "return (d - y * (d * y).mean(axis=1, keepdims=True)) / r",
            ],
        },
    },
    "04-rows-columns": {
        "check_layer_row": {
            "fill": f"answer = {row('ch4_ex1_a', 'ch4_ex1_b', 'ch4_ex1_c', spec='.8f')}",
            "shown": [],
        },
        "check_rms_row": {
            "fill": f"answer = {row('ch4_ex2_a', 'ch4_ex2_b', 'ch4_ex2_c', spec='.8f')}",
            "shown": [],
        },
        "check_layer_counts": {"fill": "answer = [6, 20, 20]", "shown": ["2 \\times 3 = 6$ means"]},
        "check_group_counts": {"fill": "answer = [75, 32]", "shown": ["8 \\times 4 = 32$ means"]},
        "check_transformer_axes": {
            "fill": "answer = [[4096, 512], [512, 4096]]",
            "shown": ["= 4096$ statistics, each over the 512 features", "512 statistics"],
        },
        "check_rescaled_gap": {"fill": f"answer = {g('ch4_ex6_gap', '.1e')}", "shown": []},
    },
    "05-weight-norm": {
        "check_magnitude_grad": {"fill": f"answer = {g('wn_ex1_g', '.2f')}", "shown": []},
        "check_direction_grad": {
            "fill": f"answer = {column('wn_ex1_v1', 'wn_ex1_v2', spec='.3f')}",
            "shown": [],
        },
        "check_unprojected_dot": {"fill": f"answer = {g('wn_ex2', '.1f')}", "shown": []},
        "check_gap_factor": {"fill": f"answer = {g('wn_ex3_factor', 'g')}", "shown": []},
    },
    "06-comparison": {
        "check_held_out_people": {"fill": f"answer = {g('c6_ex1_people')}", "shown": []},
        "check_first_under_half_rate": {"fill": f"answer = {g('c6_ex2_epoch')}", "shown": []},
        "check_rms_seeds_holding_up": {"fill": f"answer = {g('c6_ex3_count')}", "shown": []},
        "check_logistic_population_minus_held": {
            "fill": f"answer = {g('c6_ex4_gap', '.2f')}",
            "shown": [],
        },
    },
    "07-rates-and-leaks": {
        "check_clip_loss": {"fill": f"answer = {g('ch07_ex1', '.4f')}", "shown": []},
        "check_rate_ten": {"fill": f"answer = {g('ch07_ex2', '.4f')}", "shown": []},
        "check_batch_of_ten": {"fill": f"answer = {g('ch07_ex3', '.4f')}", "shown": []},
    },
    "08-why-and-where": {
        "check_gradient_change": {"fill": "answer = 10.0005", "shown": ["\\approx 10.0005$"]},
        "check_parameter_counts": {
            "fill": "learned, running = 512, 512",
            "shown": ["= 512$ learned parameters", "another 512 figures"],
        },
        "check_balancing_decay": {"fill": "answer = 0.00025", "shown": ["= 0.00025$"]},
    },
    "09-where-it-is-used": {
        "check_folded": {
            "fill": "weight, bias_ = 2.9632, 1.4877",
            "shown": ["3k \\approx 2.9632$", "\\approx 1.4877$"],
        },
        "check_post_ln_ratio": {
            "fill": 'p = prepost.gradient_profile("post-LN", seeds=(0,), blocks=6)\n'
            "answer = p.norm[0, -1] / p.norm[0, 0]",
            "shown": [
                'p = prepost.gradient_profile("post-LN", seeds=(0,), blocks=6)',
                "p.norm[0, -1] / p.norm[0, 0]",
            ],
        },
        "check_qk_bound": {"fill": "answer = 8", "shown": ["at most $\\sqrt d$ = 8"]},
    },
    "10-convnets": {
        "check_shapes": {
            "fill": "batch_mean, group_mean, scale = (8,), (32, 2), (8,)",
            "shown": ["shape (8,)", "(32, 2)", "scale and shift are per channel, (8,)"],
        },
        "check_folded": {
            "fill": "kernel, bias = [[1.5, 3], [0, -1.5]], -2.5",
            "shown": ["1.5 & 3 \\\\ 0 & -1.5", "= -2.5$"],
        },
        "check_small_batch": {
            "fill": 'suffers, pooled = "batch", 32',
            "shown": ["Only batch norm", "32 values"],
        },
    },
    "11-last-digits": {
        "check_last_place": {"fill": f"answer = {g('c11_ex1_k')}", "shown": []},
    },
    "12-reference": {
        "check_pytorch_variance": {"fill": f"answer = {g('ch12_ex1', '.1f')}", "shown": []},
        "check_two_steps": {"fill": f"answer = {g('ch12_ex2', '.2f')}", "shown": []},
        "check_tiny_scale": {"fill": f"answer = {g('ch12_ex3')}", "shown": []},
    },
}
