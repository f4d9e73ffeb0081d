/**
 * Renders the `logback.xml` of one development node: everything at INFO into one size-capped,
 * rolling file, nothing on the console (the JVM's stdout has its own file for crashes).
 *
 * A few loggers that report routine work on every flush, compaction or GC pause are raised to
 * WARN: on a dev node under ingest they would otherwise drown the lines a person looks for
 * (start-up, gossip, errors). The readiness line of `org.apache.cassandra.transport` stays.
 *
 * @internal
 */
export function renderLogbackXml(systemLog: string): string {
  const file = escapeXml(systemLog);
  return `<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by scylla-loader (src/devdb/logbackXml.ts); rewritten at every start. -->
<configuration>
  <appender name="FILE" class="ch.qos.logback.core.rolling.RollingFileAppender">
    <file>${file}</file>
    <rollingPolicy class="ch.qos.logback.core.rolling.FixedWindowRollingPolicy">
      <fileNamePattern>${file}.%i.zip</fileNamePattern>
      <minIndex>1</minIndex>
      <maxIndex>3</maxIndex>
    </rollingPolicy>
    <triggeringPolicy class="ch.qos.logback.core.rolling.SizeBasedTriggeringPolicy">
      <maxFileSize>20MB</maxFileSize>
    </triggeringPolicy>
    <encoder>
      <pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern>
    </encoder>
  </appender>

  <logger name="org.apache.cassandra.db.ColumnFamilyStore" level="WARN"/>
  <logger name="org.apache.cassandra.db.memtable" level="WARN"/>
  <logger name="org.apache.cassandra.db.compaction" level="WARN"/>
  <logger name="org.apache.cassandra.io.sstable" level="WARN"/>
  <logger name="org.apache.cassandra.service.GCInspector" level="WARN"/>
  <logger name="org.apache.cassandra.utils.memory" level="WARN"/>
  <logger name="com.datastax" level="WARN"/>

  <root level="INFO">
    <appender-ref ref="FILE"/>
  </root>
</configuration>
`;
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
