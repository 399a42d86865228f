// The Slack-compatible form of an event: `text` (what notifications and old clients show) and one
// section block in Slack's markdown with a link into the console. Slack, Mattermost and other
// Slack-compatible incoming webhooks take it as is.
export interface StoredPayload {
  type: string;
  timestamp: string;
  data: { title: string; text: string; url: string; [k: string]: unknown };
}

/** Slack's mrkdwn needs &, < and > escaped in text that is not a link. */
const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function slackMessage(p: StoredPayload) {
  const title = escape(p.data.title);
  return {
    text: `${title}: ${escape(p.data.text)}`,
    blocks: [
      {
        type: 'section',
        text: { type: 'mrkdwn', text: `*${title}*\n${escape(p.data.text)}\n<${p.data.url}|Open in the console>` },
      },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `${p.type} · ${p.timestamp}` }] },
    ],
  };
}
