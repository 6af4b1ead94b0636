"""SCROLLS, run zero-shot (spec §5): its seven tasks, rows, metric, prompts, baselines and submission CSV.

The six tasks SCROLLS shares with ZeroSCROLLS are prompted with ZeroSCROLLS' own templates; ContractNLI has a
template of ours (`prompts/contract_nli.yaml`).
"""
