"""Command-line helpers for the experiment scripts."""
import argparse


def str2bool(v: str) -> bool:
    if isinstance(v, bool):
        return v
    if v.lower() in ("yes", "true", "t", "y", "1"):
        return True
    elif v.lower() in ("no", "false", "f", "n", "0"):
        return False
    return v


def run_name(args):
    """Name of the results folder of one run."""
    return f"{args.dataset}_{args.hardness}_p{args.p}_seed{args.seed}"


def build_parser():
    parser = argparse.ArgumentParser(description="Run one hardness experiment")
    parser.add_argument("--dataset", default="cifar10")
    parser.add_argument("--hardness", default="uniform")
    parser.add_argument("--p", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--verbose", type=str2bool, default=False)
    return parser
