package dev.navbench.relay;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The relay's wire format: a 2-byte topic length, the UTF-8 topic, an 8-byte
 * sequence number, a 4-byte payload length and the payload, all big-endian.
 */
public final class MessageCodec {
    private static final int MAX_TOPIC = 255;

    private MessageCodec() {}

    public static byte[] encode(Message m) {
        byte[] topic = m.topic().getBytes(StandardCharsets.UTF_8);
        if (topic.length > MAX_TOPIC) {
            throw new IllegalArgumentException("topic longer than " + MAX_TOPIC + " bytes");
        }
        byte[] payload = m.payload();
        ByteBuffer buf = ByteBuffer.allocate(2 + topic.length + 8 + 4 + payload.length);
        buf.putShort((short) topic.length);
        buf.put(topic);
        buf.putLong(m.sequence());
        buf.putInt(payload.length);
        buf.put(payload);
        return buf.array();
    }

    public static Message decode(byte[] frame) {
        ByteBuffer buf = ByteBuffer.wrap(frame);
        int topicLength = buf.getShort();
        byte[] topic = new byte[topicLength];
        buf.get(topic);
        long sequence = buf.getLong();
        int payloadLength = buf.getInt();
        if (payloadLength < 0 || payloadLength > buf.remaining()) {
            throw new IllegalArgumentException("bad payload length " + payloadLength);
        }
        byte[] payload = new byte[payloadLength];
        buf.get(payload);
        return new Message(new String(topic, StandardCharsets.UTF_8), sequence, payload);
    }
}
