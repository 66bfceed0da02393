package io.tributary.jvm;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;

/**
 * The log4j2 appender that hands every log event of the hosted plugins (SLF4J through log4j2)
 * to Tributary's log (Natives.log), on the thread that logged: a line logged on a task's or
 * connector's thread carries that task's or connector's context there, as Connect's MDC
 * {@code connector.context} does. Installed in place of the console appender when the worker's
 * JVM starts; the separate plugin-scanning process keeps the console.
 */
final class TributaryAppender extends AbstractAppender {
    private TributaryAppender() {
        super("Tributary", null, null, true, Property.EMPTY_ARRAY);
    }

    /** Routes the root logger to Tributary's log, at {@code level} (Tributary's root level). */
    static void install(String level) {
        LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        Configuration config = ctx.getConfiguration();
        TributaryAppender appender = new TributaryAppender();
        appender.start();
        config.addAppender(appender);
        LoggerConfig root = config.getRootLogger();
        for (String name : root.getAppenders().keySet()) {
            root.removeAppender(name);
        }
        root.addAppender(appender, null, null);
        root.setLevel(Level.toLevel(level, Level.INFO));
        ctx.updateLoggers();
    }

    /**
     * Sets one logger's level ({@code root} for the root logger), as Connect's
     * {@code Loggers.setLevel} does for each logger it changes: {@code /admin/loggers} on a
     * Tributary worker reaches the hosted plugins' loggers through here. {@code level} is one of
     * log4j2's names (TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF).
     */
    static void setLevel(String logger, String level) {
        Level l = Level.toLevel(level, null);
        if (l == null) {
            throw new IllegalArgumentException("invalid log level '" + level + "'");
        }
        if ("root".equals(logger)) {
            Configurator.setRootLevel(l);
        } else {
            Configurator.setLevel(logger, l);
        }
    }

    @Override
    public void append(LogEvent event) {
        Throwable thrown = event.getThrown();
        Natives.log(event.getLevel().intLevel(), event.getLoggerName(),
            event.getMessage().getFormattedMessage(), thrown == null ? null : Bridge.trace(thrown));
    }
}
