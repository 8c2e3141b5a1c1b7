# One image for every role: `countersign serve`, `countersign worker`, `countersign agent`.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund && npm cache clean --force
COPY . .
USER node
EXPOSE 3000
ENTRYPOINT ["node", "bin/countersign.js"]
CMD ["serve"]
