import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.hive.common.LogUtils;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.IMetaStoreClient;
import org.apache.hadoop.hive.metastore.api.DataOperationType;
import org.apache.hadoop.hive.metastore.LockComponentBuilder;
import org.apache.hadoop.hive.metastore.LockRequestBuilder;
import org.apache.hadoop.hive.ql.Driver;
import org.apache.hadoop.hive.ql.metadata.Hive;
import org.apache.hadoop.hive.ql.processors.CommandProcessorResponse;
import org.apache.hadoop.hive.ql.session.SessionState;

/**
 * Hive 2.3's own engine (org.apache.hadoop.hive.ql.Driver, as the CLI runs it) against the metastore at a thrift://
 * URI: each line of SCRIPT is one statement; OUT gets each statement's rows, or its error, as JSON.
 *
 *   java ... HiveDriverScript thrift://HOST:PORT WAREHOUSE SCRIPT OUT
 *
 * Lines starting with "!" are another client's calls, made through the session's metastore client so that SHOW
 * LOCKS and SHOW TRANSACTIONS have something to show: "!open_txn" opens a txn as user "other";
 * "!lock_shared DB.TABLE" takes a SHARED_READ lock (a SELECT) on the table under that txn (its id is not written: ids differ
 * by nature); "!abort_txn" aborts that txn, which releases its locks.
 */
public class HiveDriverScript {
  static String quote(String s) {
    if (s == null) return "null";
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"': b.append("\\\""); break;
        case '\\': b.append("\\\\"); break;
        case '\n': b.append("\\n"); break;
        case '\r': b.append("\\r"); break;
        case '\t': b.append("\\t"); break;
        default:
          if (c < 0x20) b.append(String.format("\\u%04x", (int) c)); else b.append(c);
      }
    }
    return b.append('"').toString();
  }

  static long otherTxn = 0;

  static String other(HiveConf conf, String line) throws Exception {
    IMetaStoreClient msc = Hive.get(conf).getMSC();
    String[] words = line.substring(1).trim().split("\\s+");
    if (words[0].equals("open_txn")) {
      otherTxn = msc.openTxn("other");
      return "ok";
    }
    if (words[0].equals("lock_shared")) {
      String[] name = words[1].split("\\.");
      LockRequestBuilder request = new LockRequestBuilder("other agent").setUser("other");
      if (otherTxn != 0) request.setTransactionId(otherTxn);
      request.addLockComponent(new LockComponentBuilder().setDbName(name[0]).setTableName(name[1]).setShared()
          .setOperationType(DataOperationType.SELECT).build());
      return msc.lock(request.build()).getState().toString();
    }
    if (words[0].equals("abort_txn")) {
      msc.rollbackTxn(otherTxn);
      otherTxn = 0;
      return "ok";
    }
    throw new IllegalArgumentException("unknown directive " + line);
  }

  public static void main(String[] args) throws Exception {
    String uri = args[0], warehouse = args[1], script = args[2], out = args[3];
    LogUtils.initHiveLog4j();
    HiveConf conf = new HiveConf(SessionState.class);
    conf.set("hive.metastore.uris", uri);
    conf.set("hive.metastore.warehouse.dir", warehouse);
    SessionState session = new SessionState(conf, "hive");
    SessionState.start(session);
    // The first Hive.get registers every built-in function; an Error there (a class missing from the classpath) would
    // leave Hive's registration flag pending and the next Hive.get waiting forever, so fail at once instead.
    Hive.get(conf);
    StringBuilder json = new StringBuilder("[\n");
    String sep = "";
    for (String sql : Files.readAllLines(Paths.get(script), StandardCharsets.UTF_8)) {
      if (sql.isBlank()) continue;
      StringBuilder rec = new StringBuilder("{\"sql\": " + quote(sql));
      if (sql.startsWith("!")) {
        try {
          rec.append(", \"rows\": [" + quote(other(conf, sql)) + "]");
        } catch (Exception e) {
          rec.append(", \"error\": " + quote(e.toString()));
        }
      } else {
        Driver driver = new Driver(conf);
        try {
          CommandProcessorResponse r = driver.run(sql);
          if (r.getResponseCode() != 0) {
            rec.append(", \"error\": " + quote(r.getErrorMessage()));
          } else {
            List<String> rows = new ArrayList<>(), all = new ArrayList<>();
            try {
              while (driver.getResults(rows)) {
                all.addAll(rows);
                rows.clear();
              }
              rec.append(", \"rows\": [");
              for (int i = 0; i < all.size(); i++) rec.append(i == 0 ? "" : ", ").append(quote(all.get(i)));
              rec.append("]");
            } catch (IOException e) {
              // The fetch task failed reading the files (e.g. a directory where a file was expected): as Hive's
              // CLI, the statement fails and the script goes on.
              rec.append(", \"error\": " + quote("Failed with exception " + e));
            }
          }
        } finally {
          driver.close();
          driver.destroy();
        }
      }
      json.append(sep).append(rec).append("}");
      sep = ",\n";
    }
    Files.write(Paths.get(out), json.append("\n]\n").toString().getBytes(StandardCharsets.UTF_8));
    session.close();
    System.exit(0);
  }
}
