/**
 * The Apache Cassandra release the development node runs. 5.0 is the first line that runs on
 * Java 17, which is the JDK we can count on; 4.x refuses to start on it.
 */
export const DEFAULT_CASSANDRA_VERSION = '5.0.9';
