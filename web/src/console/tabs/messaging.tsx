import { TabHeader } from '../ui/controls';

export function MessagingTab() {
  return <TabHeader title="Messaging" />;
}
