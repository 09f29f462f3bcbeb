package dev.navbench.relay;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/** One message on the relay: a topic, a sequence number and a payload. */
public final class Message {
    private final String topic;
    private final long sequence;
    private final byte[] payload;

    public Message(String topic, long sequence, byte[] payload) {
        if (topic == null || topic.isEmpty()) {
            throw new IllegalArgumentException("topic must not be empty");
        }
        this.topic = topic;
        this.sequence = sequence;
        this.payload = payload == null ? new byte[0] : payload.clone();
    }

    public static Message text(String topic, long sequence, String body) {
        return new Message(topic, sequence, body.getBytes(StandardCharsets.UTF_8));
    }

    public String topic() {
        return topic;
    }

    public long sequence() {
        return sequence;
    }

    public byte[] payload() {
        return payload.clone();
    }

    public String body() {
        return new String(payload, StandardCharsets.UTF_8);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Message)) {
            return false;
        }
        Message m = (Message) o;
        return sequence == m.sequence && topic.equals(m.topic)
                && java.util.Arrays.equals(payload, m.payload);
    }

    @Override
    public int hashCode() {
        return Objects.hash(topic, sequence, java.util.Arrays.hashCode(payload));
    }
}
