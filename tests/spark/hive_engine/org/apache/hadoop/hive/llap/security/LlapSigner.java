package org.apache.hadoop.hive.llap.security;

/** Stand-in for hive-llap-common's LlapSigner (not in pyspark's jars): FunctionRegistry loads GenericUDTFGetSplits,
 * whose signatures name these types; nothing here calls them. */
public interface LlapSigner {
  interface Signable {
    void setSignInfo(int masterKeyId);
    int getSignatureKeyId();
    byte[] serialize() throws java.io.IOException;
  }
  class SignedMessage {
    public byte[] message;
    public byte[] signature;
  }
  SignedMessage serializeAndSign(Signable message) throws java.io.IOException;
}
