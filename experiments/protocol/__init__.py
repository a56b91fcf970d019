"""The benchmark protocol (benchmark, validate_proxy, llm_team_result, transfer, ablations, ...)
and the measurements the results cite (known answers, judge validity, writing, injections)."""
