"""8 concurrent clients x several requests against a real tritonserver running 2 instances
of one thread each: every answer bitwise equal to `swinrun forward --threads 1` on its own
input, the server's RSS flat across rounds, and nv_inference_request_success matching the
requests sent. The same with dynamic batching (max_batch_size 4): requests gathered into one
execution run one after another in the instance's arena, each answered with its own logits.

    test_concurrency.py BACKEND_SO SWINRUN MAIN_PYTHON TEST_DATA WORK
"""
import os
import sys
import threading

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Server, check, infer_window, swinrun_forward, test_args, window_config, write_model  # noqa: E402

CLIENTS, REQUESTS, ROUNDS, RSS_TOLERANCE_MIB = 8, 3, 3, 4
backend_so, swinrun, main_py, data, work, repo = test_args(sys.argv)
case_dir = os.path.join(data, "f12_c32_default")
write_model(repo, "w", case_dir, window_config((32, 32, 32), instances=2, threads=1))
write_model(repo, "wb", case_dir, window_config((32, 32, 32), instances=2, threads=1, max_batch=4) +
            "dynamic_batching { max_queue_delay_microseconds: 200000 }\n")

# one input per client, each with its own reference logits
x = np.load(os.path.join(case_dir, "input.npy"))
inputs = [(x * (1 + 0.1 * k) - 0.05 * k).astype(np.float32) for k in range(CLIENTS)]
refs = [swinrun_forward(swinrun, case_dir, inputs[k], os.path.join(work, "forward_%d.npy" % k)) for k in range(CLIENTS)]
check(all(not np.array_equal(refs[0], r) for r in refs[1:]), "%d distinct references" % CLIENTS)


def run_round(s, model="w"):
    results = [[None] * REQUESTS for _ in range(CLIENTS)]

    def client(k):
        c = s.http()
        for j in range(REQUESTS):
            try:
                got = infer_window(c, model, inputs[k])
                results[k][j] = np.array_equal(got, refs[k]) and got.shape[0] == 1
            except Exception as e:  # noqa: BLE001 - recorded as a wrong answer
                print("client %d request %d: %s" % (k, j, e))
                results[k][j] = False

    threads = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    return sum(bool(r) for row in results for r in row)


with Server(backend_so, repo, work) as s:
    rss = []
    for r in range(ROUNDS):
        correct = run_round(s)
        rss.append(s.rss_kib())
        check(correct == CLIENTS * REQUESTS, "round %d: %d of %d answers bitwise equal to their swinrun forward "
              "(RSS %.1f MiB)" % (r + 1, correct, CLIENTS * REQUESTS, rss[-1] / 1024))
    growth = (rss[-1] - rss[0]) / 1024
    check(abs(growth) <= RSS_TOLERANCE_MIB, "RSS flat across rounds 1..%d: %+.2f MiB" % (ROUNDS, growth))
    total = CLIENTS * REQUESTS * ROUNDS
    success = s.metric_reaching("nv_inference_request_success", total, model="w", version="1")
    count = s.metric_reaching("nv_inference_count", total, model="w", version="1")
    failure = s.metric("nv_inference_request_failure", model="w", version="1")
    check(success == total and failure == 0 and count == total,
          "metrics: nv_inference_request_success %d, failure %d, inference_count %d for %d requests"
          % (success, failure, count, total))
    stats = s.http().get_inference_statistics("w")["model_stats"][0]
    check(int(stats["execution_count"]) == total, "statistics: %s executions" % stats["execution_count"])
    check(s.log_text().count("swinrun instance 'w_0_") == 2, "two instances, each with its own context")

    # dynamic batching: several requests per execution
    correct = run_round(s, "wb")
    check(correct == CLIENTS * REQUESTS, "dynamic batching: %d of %d answers bitwise equal to their swinrun forward"
          % (correct, CLIENTS * REQUESTS))
    stats = s.http().get_inference_statistics("wb")["model_stats"][0]
    n, execs = int(stats["inference_count"]), int(stats["execution_count"])
    check(n == CLIENTS * REQUESTS and execs < n, "dynamic batching: %d requests in %d executions" % (n, execs))
    check(s.metric_reaching("nv_inference_request_success", n, model="wb", version="1") == n, "wb: nv_inference_request_success %d" % n)
print("PASS")
