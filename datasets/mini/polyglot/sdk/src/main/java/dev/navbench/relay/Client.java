package dev.navbench.relay;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/** Sends messages through a transport, retrying failed sends with a policy. */
public class Client {
    /** Where frames go: a socket in production, a list in tests. */
    public interface Transport {
        void send(byte[] frame) throws IOException;
    }

    private final Transport transport;
    private final RetryPolicy policy;
    private final List<Long> delays = new ArrayList<>();
    private long nextSequence = 1;

    public Client(Transport transport, RetryPolicy policy) {
        this.transport = transport;
        this.policy = policy;
    }

    public Message publish(String topic, String body) throws IOException, InterruptedException {
        Message m = Message.text(topic, nextSequence++, body);
        sendWithRetry(MessageCodec.encode(m));
        return m;
    }

    void sendWithRetry(byte[] frame) throws IOException, InterruptedException {
        int attempt = 0;
        while (true) {
            try {
                transport.send(frame);
                return;
            } catch (IOException e) {
                attempt++;
                if (!policy.shouldRetry(attempt)) {
                    throw e;
                }
                long delay = policy.nextDelay(attempt);
                delays.add(delay);
                Thread.sleep(delay);
            }
        }
    }

    /** The delays slept so far, for metrics. */
    public List<Long> delays() {
        return List.copyOf(delays);
    }
}
