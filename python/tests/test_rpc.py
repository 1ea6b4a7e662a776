"""pytorch:rpc without an RPC group: the mailbox a send lands in, the
deferred backward (one root per backward statement, summed as seeding with
ones does), where a leaf's gradient is read, and what the API refuses."""

import unittest

import torch

from collgrad_torch.runner import api_rpc, comm


def api() -> api_rpc.RpcApi:
    try:
        return api_rpc.RpcApi(None, "gloo")
    except comm.Unavailable as e:
        raise unittest.SkipTest(str(e))


class MailboxTest(unittest.TestCase):
    def test_a_delivered_tensor_is_taken_once_by_its_key(self):
        t = torch.tensor([1.0, 2.0])
        api_rpc._deliver((5, 0, 1, 3), t)
        self.assertIs(api_rpc._take((5, 0, 1, 3), 1.0), t)
        with self.assertRaisesRegex(TimeoutError, "recv from rank 0 timed out after 0.05 s"):
            api_rpc._take((5, 0, 1, 3), 0.05)

    def test_an_earlier_jobs_leftovers_are_dropped(self):
        api_rpc._deliver((1, 0, 1, 0), torch.zeros(1))
        api_rpc._deliver((2, 0, 1, 0), torch.ones(1))
        api_rpc.forget_before(2)
        with self.assertRaises(TimeoutError):
            api_rpc._take((1, 0, 1, 0), 0.01)
        self.assertEqual(api_rpc._take((2, 0, 1, 0), 0.01).tolist(), [1.0])


class RpcApiTest(unittest.TestCase):
    def test_only_send_and_recv(self):
        a = api()
        self.assertIsNone(a.unsupported(["send", "recv"]))
        self.assertEqual(a.unsupported(["send", "all_reduce"]),
                         "pytorch:rpc covers send and recv only (torch.distributed.rpc has no collectives); "
                         "this case also uses all_reduce")

    def test_backward_is_deferred_as_sums(self):
        a = api()
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        a.backward(x * x, "c.case:4:1")
        a.backward((x * 2).sum(), "c.case:5:1")
        self.assertIsNone(x.grad)  # nothing ran yet
        self.assertEqual(a.backward_at, "c.case:4:1")
        # d/dx [sum(x*x) + sum(2x)] = 2x + 2, by hand: [4, 6, 8]
        torch.autograd.backward(a.roots)
        self.assertEqual(x.grad.tolist(), [4.0, 6.0, 8.0])

    def test_a_leafs_gradient_comes_from_the_context(self):
        a = api()
        leaf = torch.ones(2, requires_grad=True)
        mid = leaf * 3
        mid.retain_grad()
        mid.sum().backward()
        a.grads = {leaf: torch.tensor([7.0, 7.0])}
        self.assertEqual(a.gradient(leaf).tolist(), [7.0, 7.0])  # not .grad ([3, 3])
        self.assertEqual(a.gradient(mid).tolist(), [1.0, 1.0])


if __name__ == "__main__":
    unittest.main()
